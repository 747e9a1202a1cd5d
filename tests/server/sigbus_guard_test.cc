// The SIGBUS guard on its own: a read past the end of a truncated file's mapping does not kill the
// process; the mapping reads zeros from then on and reports the fault. (Its own binary: the guard
// is process-wide.)
#include "server/sigbus_guard.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "gtest/gtest.h"

namespace sortd {
namespace {

TEST(SigbusGuardTest, ReadPastATruncatedFileIsContained) {
  char path[] = "/tmp/sortd-sigbus-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  const size_t bytes = 16 * 4096;
  ASSERT_EQ(ftruncate(fd, bytes), 0);
  auto* base =
      static_cast<volatile char*>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  ASSERT_NE(base, MAP_FAILED);
  base[bytes - 1] = 7;

  auto guard = SigbusGuard::Create();
  ASSERT_TRUE(guard.ok()) << guard.status();
  EXPECT_EQ(SigbusGuard::Create().status().code(), absl::StatusCode::kFailedPrecondition);
  auto watch = (*guard)->WatchMapping(const_cast<char*>(base), bytes);
  ASSERT_TRUE(watch.ok()) << watch.status();
  EXPECT_FALSE((*watch)->faulted());

  ASSERT_EQ(ftruncate(fd, 4096), 0);  // the last 15 pages are gone from the file
  EXPECT_EQ(base[bytes - 1], 0);      // SIGBUS without the guard; zeros with it
  EXPECT_TRUE((*watch)->faulted());
  base[5 * 4096] = 1;  // writes go to the anonymous pages too
  EXPECT_EQ(base[5 * 4096], 1);

  watch->reset();
  munmap(const_cast<char*>(base), bytes);
  close(fd);
  unlink(path);
}

TEST(SigbusGuardTest, ASigbusElsewhereStillKills) {
  EXPECT_DEATH(
      {
        auto guard = SigbusGuard::Create();
        char path[] = "/tmp/sortd-sigbus-XXXXXX";
        const int fd = mkstemp(path);
        unlink(path);
        if (ftruncate(fd, 4096) != 0) std::abort();
        auto* p = static_cast<volatile char*>(
            mmap(nullptr, 8192, PROT_READ, MAP_SHARED, fd, 0));  // one page past the file's end
        std::exit(p[4096]);  // not watched: the default action ends the process
      },
      "");
}

}  // namespace
}  // namespace sortd
