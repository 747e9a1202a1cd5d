// A load test's results as text for people, JSON for scripts, and one CSV row (with a header) for
// spreadsheets and the bench/ scenario scripts. Latencies are reported in milliseconds.
#pragma once

#include <string>

#include "client/bench/load_generator.h"

namespace sortd::bench {

// "sort u32 fixed:1000 closed c16 m1 d1", naming the run in tables (c: in flight at most,
// m: channels, d: dispatcher threads).
std::string DescribeLoad(const BenchOptions& options);

std::string FormatTextReport(const BenchResult& result);
std::string FormatJsonReport(const BenchResult& result);
std::string CsvHeader();
std::string FormatCsvRow(const BenchResult& result);

// The progress line for terminals (no newline; the caller rewrites it with '\r').
std::string FormatProgressLine(const Progress& progress);

}  // namespace sortd::bench
