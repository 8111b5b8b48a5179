#pragma once
// Not in this tree, though the file exists above it: ../../outside.md.
