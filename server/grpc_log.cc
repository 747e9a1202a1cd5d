#include "server/grpc_log.h"

#include <cstdio>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "grpc/support/log.h"

namespace sortd {
namespace {

struct Limiter {
  absl::Mutex mu;
  int lines_per_second ABSL_GUARDED_BY(mu) = kDefaultGrpcLogLinesPerSecond;
  absl::Time window_start ABSL_GUARDED_BY(mu);
  int written ABSL_GUARDED_BY(mu) = 0;
  long dropped ABSL_GUARDED_BY(mu) = 0;
};

Limiter& TheLimiter() {
  static Limiter* limiter = new Limiter;  // gRPC may log from its threads until the process ends
  return *limiter;
}

const char* SeverityName(gpr_log_severity severity) {
  switch (severity) {
    case GPR_LOG_SEVERITY_DEBUG: return "D";
    case GPR_LOG_SEVERITY_INFO: return "I";
    default: return "E";
  }
}

void LimitedLog(gpr_log_func_args* args) {
  Limiter& l = TheLimiter();
  const absl::Time now = absl::Now();
  long dropped = 0;
  int limit = 0;
  {
    absl::MutexLock lock(&l.mu);
    if (now - l.window_start >= absl::Seconds(1)) {
      dropped = l.dropped;
      l.window_start = now;
      l.written = 0;
      l.dropped = 0;
    }
    limit = l.lines_per_second;
    if (l.written >= limit) {
      ++l.dropped;
      return;
    }
    ++l.written;
  }
  const std::string stamp = absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", now, absl::UTCTimeZone());
  if (dropped > 0) {
    std::fprintf(stderr, "%s sortd: %ld gRPC log lines dropped in the last second (limit %d/s)\n",
                 stamp.c_str(), dropped, limit);
  }
  std::fprintf(stderr, "%s grpc %s %s:%d] %s\n", stamp.c_str(), SeverityName(args->severity),
               args->file, args->line, args->message);
}

}  // namespace

void LimitGrpcLogging(int lines_per_second) {
  {
    Limiter& l = TheLimiter();
    absl::MutexLock lock(&l.mu);
    l.lines_per_second = lines_per_second;
  }
  gpr_set_log_function(LimitedLog);
}

}  // namespace sortd
