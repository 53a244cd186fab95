#pragma once
#define PROBE_VALUE 42
