// sortd's flags (server/flags/): each file's Apply function copies its flags into the fields they
// set, the defaults are those of the option structs, and a value the struct cannot take is
// INVALID_ARGUMENT naming the flag and the value.
#include "server/flags/flags.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

ABSL_DECLARE_FLAG(std::string, listen);
ABSL_DECLARE_FLAG(int, grpc_log_lines_per_second);
ABSL_DECLARE_FLAG(uint64_t, max_inflight_bytes);
ABSL_DECLARE_FLAG(bool, retain_freed_memory);
ABSL_DECLARE_FLAG(uint64_t, max_stream_keys);
ABSL_DECLARE_FLAG(absl::Duration, stream_early_start_patience);
ABSL_DECLARE_FLAG(std::string, engine);
ABSL_DECLARE_FLAG(std::string, gpus);
ABSL_DECLARE_FLAG(uint64_t, gpu_queue_limit);
ABSL_DECLARE_FLAG(bool, gpu_keep_runs);
ABSL_DECLARE_FLAG(int, out_of_core_merge_threads);
ABSL_DECLARE_FLAG(int, cpu_threads);
ABSL_DECLARE_FLAG(std::string, shared_memory_dir);
ABSL_DECLARE_FLAG(std::string, tls_cert_file);
ABSL_DECLARE_FLAG(std::string, metrics_listen);
ABSL_DECLARE_FLAG(absl::Duration, drain_deadline);
ABSL_DECLARE_FLAG(int, test_stand_in_gpus);
ABSL_DECLARE_FLAG(bool, mutex_deadlock_detection);

namespace sortd {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Every Apply function over default flags: the structs keep their own defaults, but for the
// metrics endpoint, which sortd serves unless told not to.
TEST(SortdFlags, DefaultsAreTheStructsDefaults) {
  ProcessOptions process;
  EngineOptions engine;
  ServerOptions server;
  ASSERT_TRUE(ApplyNetworkFlags(server, process).ok());
  ASSERT_TRUE(ApplyMemoryFlags(server, process).ok());
  ASSERT_TRUE(ApplyStreamFlags(server).ok());
  ASSERT_TRUE(ApplyEngineGpuFlags(engine).ok());
  ASSERT_TRUE(ApplyOutOfCoreFlags(engine.gpu).ok());
  ASSERT_TRUE(ApplyEngineCpuFlags(engine.cpu).ok());
  ASSERT_TRUE(ApplySharedMemoryFlags(server.shared_memory).ok());
  ASSERT_TRUE(ApplyTlsFlags(server.tls).ok());
  ASSERT_TRUE(ApplyMetricsFlags(server).ok());
  ASSERT_TRUE(ApplyDrainFlags(server).ok());
  ASSERT_TRUE(ApplyTestFlags(engine, process).ok());

  const ServerOptions s;
  EXPECT_EQ(server.listen_address, s.listen_address);
  EXPECT_EQ(server.limits.max_keys, s.limits.max_keys);
  EXPECT_EQ(server.limits.max_stream_keys, s.limits.max_stream_keys);
  EXPECT_EQ(server.max_inflight_bytes, s.max_inflight_bytes);
  EXPECT_EQ(server.sort_stream.early_start_patience, s.sort_stream.early_start_patience);
  EXPECT_EQ(server.shared_memory.dir, s.shared_memory.dir);
  EXPECT_EQ(server.tls.refresh_interval, s.tls.refresh_interval);
  EXPECT_EQ(server.drain_deadline, s.drain_deadline);
  EXPECT_EQ(server.metrics_address, "0.0.0.0:9464");
  const EngineOptions e;
  EXPECT_EQ(engine.kind, EngineKind::kAuto);
  EXPECT_THAT(engine.gpu.devices, IsEmpty());  // every GPU
  EXPECT_EQ(engine.gpu.workers_per_gpu, e.gpu.workers_per_gpu);
  EXPECT_EQ(engine.gpu.batching.max_queued_jobs, e.gpu.batching.max_queued_jobs);
  EXPECT_EQ(engine.gpu.device.keep_runs, e.gpu.device.keep_runs);
  EXPECT_EQ(engine.gpu.out_of_core.merge_threads, e.gpu.out_of_core.merge_threads);
  EXPECT_EQ(engine.cpu.threads, e.cpu.threads);
  EXPECT_EQ(engine.gpu.test_stand_in_devices, 0);
  const ProcessOptions p;
  EXPECT_EQ(process.grpc_log_lines_per_second, p.grpc_log_lines_per_second);
  EXPECT_EQ(process.retain_freed_memory, p.retain_freed_memory);
  EXPECT_EQ(process.mutex_deadlock_detection, p.mutex_deadlock_detection);
}

TEST(SortdFlags, EachFileSetsItsFields) {
  absl::FlagSaver restore;
  absl::SetFlag(&FLAGS_listen, "unix:/tmp/sortd.sock");
  absl::SetFlag(&FLAGS_grpc_log_lines_per_second, 3);
  absl::SetFlag(&FLAGS_max_inflight_bytes, 1 << 20);
  absl::SetFlag(&FLAGS_retain_freed_memory, false);
  absl::SetFlag(&FLAGS_max_stream_keys, 1000);
  absl::SetFlag(&FLAGS_stream_early_start_patience, absl::Milliseconds(7));
  absl::SetFlag(&FLAGS_engine, "cpu");
  absl::SetFlag(&FLAGS_gpus, "0,2");
  absl::SetFlag(&FLAGS_gpu_queue_limit, 5);
  absl::SetFlag(&FLAGS_gpu_keep_runs, false);
  absl::SetFlag(&FLAGS_out_of_core_merge_threads, 6);
  absl::SetFlag(&FLAGS_cpu_threads, 2);
  absl::SetFlag(&FLAGS_shared_memory_dir, "/tmp");
  absl::SetFlag(&FLAGS_tls_cert_file, "server.crt");
  absl::SetFlag(&FLAGS_metrics_listen, "");
  absl::SetFlag(&FLAGS_drain_deadline, absl::Seconds(4));
  absl::SetFlag(&FLAGS_test_stand_in_gpus, 2);
  absl::SetFlag(&FLAGS_mutex_deadlock_detection, true);

  ProcessOptions process;
  EngineOptions engine;
  ServerOptions server;
  ASSERT_TRUE(ApplyNetworkFlags(server, process).ok());
  EXPECT_EQ(server.listen_address, "unix:/tmp/sortd.sock");
  EXPECT_EQ(process.grpc_log_lines_per_second, 3);
  ASSERT_TRUE(ApplyMemoryFlags(server, process).ok());
  EXPECT_EQ(server.max_inflight_bytes, 1u << 20);
  EXPECT_FALSE(process.retain_freed_memory);
  ASSERT_TRUE(ApplyStreamFlags(server).ok());
  EXPECT_EQ(server.limits.max_stream_keys, 1000u);
  EXPECT_EQ(server.sort_stream.early_start_patience, absl::Milliseconds(7));
  ASSERT_TRUE(ApplyEngineGpuFlags(engine).ok());
  EXPECT_EQ(engine.kind, EngineKind::kCpu);
  EXPECT_THAT(engine.gpu.devices, ElementsAre(0, 2));
  EXPECT_EQ(engine.gpu.batching.max_queued_jobs, 5u);
  ASSERT_TRUE(ApplyOutOfCoreFlags(engine.gpu).ok());
  EXPECT_FALSE(engine.gpu.device.keep_runs);
  EXPECT_EQ(engine.gpu.out_of_core.merge_threads, 6);
  ASSERT_TRUE(ApplyEngineCpuFlags(engine.cpu).ok());
  EXPECT_EQ(engine.cpu.threads, 2);
  ASSERT_TRUE(ApplySharedMemoryFlags(server.shared_memory).ok());
  EXPECT_EQ(server.shared_memory.dir, "/tmp");
  ASSERT_TRUE(ApplyTlsFlags(server.tls).ok());
  EXPECT_EQ(server.tls.cert_file, "server.crt");
  ASSERT_TRUE(ApplyMetricsFlags(server).ok());
  EXPECT_EQ(server.metrics_address, "");
  ASSERT_TRUE(ApplyDrainFlags(server).ok());
  EXPECT_EQ(server.drain_deadline, absl::Seconds(4));
  ASSERT_TRUE(ApplyTestFlags(engine, process).ok());
  EXPECT_EQ(engine.gpu.test_stand_in_devices, 2);
  EXPECT_TRUE(process.mutex_deadlock_detection);
}

TEST(SortdFlags, UnknownEngineNamesTheFlagAndTheValue) {
  absl::FlagSaver restore;
  absl::SetFlag(&FLAGS_engine, "bogus");
  EngineOptions engine;
  absl::Status status = ApplyEngineGpuFlags(engine);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), AllOf(HasSubstr("--engine"), HasSubstr("'bogus'")));
}

TEST(SortdFlags, BadGpuListNamesTheFlagAndTheValue) {
  absl::FlagSaver restore;
  for (const char* gpus : {"0,x", "-1", "0,,1"}) {
    absl::SetFlag(&FLAGS_gpus, gpus);
    EngineOptions engine;
    absl::Status status = ApplyEngineGpuFlags(engine);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << gpus;
    EXPECT_THAT(status.message(), HasSubstr("--gpus")) << gpus;
  }
  absl::SetFlag(&FLAGS_gpus, "0,x");
  EngineOptions engine;
  EXPECT_THAT(ApplyEngineGpuFlags(engine).message(), HasSubstr("'x' is not a device number"));
}

}  // namespace
}  // namespace sortd
