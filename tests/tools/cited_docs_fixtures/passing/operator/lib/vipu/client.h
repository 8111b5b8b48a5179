#pragma once
// The messages as proto.md (next to this file) describes them; see also ../../../docs/architecture.md.
