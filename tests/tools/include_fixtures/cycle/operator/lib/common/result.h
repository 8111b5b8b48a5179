#pragma once

struct Result {};
