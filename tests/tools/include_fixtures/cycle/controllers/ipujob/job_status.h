#pragma once

struct JobStatus {};
