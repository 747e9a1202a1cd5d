#include "server/malloc_huge_pages.h"

#include <string>

#include "gtest/gtest.h"

namespace sortd {
namespace {

constexpr char kMadvise[] = "always [madvise] never\n";

TEST(MallocHugePagesTest, TheTunableTurnsThemOnInMadviseMode) {
  EXPECT_EQ(DescribeMallocHugePages("glibc.malloc.hugetlb=1", kMadvise),
            "malloc huge pages: on (glibc.malloc.hugetlb=1, transparent huge pages: madvise)");
  EXPECT_EQ(DescribeMallocHugePages("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1", kMadvise),
            "malloc huge pages: on (glibc.malloc.hugetlb=1, transparent huge pages: madvise)");
}

TEST(MallocHugePagesTest, WithoutTheTunableInMadviseModeItWarnsAndSaysWhatToSet) {
  for (const char* tunables :
       {"", "glibc.malloc.hugetlb=0", "glibc.malloc.arena_max=2",
        "glibc.malloc.hugetlb=1:glibc.malloc.hugetlb=0", "glibc.malloc.hugetlbx=1"}) {
    const std::string line = DescribeMallocHugePages(tunables, kMadvise);
    EXPECT_EQ(line.rfind("WARNING: malloc huge pages: off (", 0), 0u) << tunables << ": " << line;
    EXPECT_NE(line.find("set GLIBC_TUNABLES=glibc.malloc.hugetlb=1"), std::string::npos) << line;
  }
}

TEST(MallocHugePagesTest, TheKernelsModeDecidesWhereTheTunableChangesNothing) {
  EXPECT_EQ(DescribeMallocHugePages("", "[always] madvise never\n"),
            "malloc huge pages: on (transparent huge pages: always)");
  EXPECT_EQ(DescribeMallocHugePages("glibc.malloc.hugetlb=1", "always madvise [never]\n"),
            "malloc huge pages: off (transparent huge pages: never)");
  EXPECT_EQ(DescribeMallocHugePages("", "garbage"),
            "malloc huge pages: off (transparent huge pages: unknown)");
  EXPECT_EQ(DescribeMallocHugePages("glibc.malloc.hugetlb=1", std::nullopt),
            "malloc huge pages: unknown (glibc.malloc.hugetlb=1; no "
            "/sys/kernel/mm/transparent_hugepage/enabled)");
}

}  // namespace
}  // namespace sortd
