// A move-only owner of a file descriptor: closes it once, never throws.
#pragma once

#include <unistd.h>

#include <utility>

namespace sortd {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { Reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      Reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;  // one owner closes it
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }

 private:
  void Reset() noexcept {
    if (fd_ >= 0) ::close(fd_);  // nothing useful to do with a failed close here
    fd_ = -1;
  }
  int fd_ = -1;
};

}  // namespace sortd
