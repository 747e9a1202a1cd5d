// gRPC's own log lines (refused handshakes, disabled compression, bad frames) are written once per
// offending call or connection, so a hostile client could otherwise fill the disk or the log
// pipeline at thousands of lines a second. sortd passes through at most a few per second and says
// how many it dropped.
#pragma once

namespace sortd {

inline constexpr int kDefaultGrpcLogLinesPerSecond = 10;

// Routes gRPC's log through a limit of `lines_per_second` (process-wide: gRPC's log hook takes a
// plain function, so the limiter's state is the process's). Call once, before the server starts.
void LimitGrpcLogging(int lines_per_second);

}  // namespace sortd
