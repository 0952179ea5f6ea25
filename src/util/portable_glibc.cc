// Linked into the portable wheel's module and command only (STOKER_PORTABLE). They carry
// libstdc++ statically, and GCC 12's libstdc++.a, built on glibc 2.36, seeds std::random_device
// from arc4random, new in glibc 2.36: that one reference would raise the wheel's floor to
// manylinux_2_36 (no Ubuntu 22.04, no RHEL 9). This definition answers it from getrandom
// (glibc 2.25) instead; being linked before libstdc++.a, it is the one the reference binds to.
// stoker's own randomness is seeded and never uses it (util/rng.h).
#include <sys/random.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>

extern "C" __attribute__((visibility("hidden"))) uint32_t arc4random(void) noexcept {
  uint32_t value = 0;
  auto* out = reinterpret_cast<char*>(&value);
  size_t got = 0;
  while (got < sizeof value) {
    const ssize_t n = getrandom(out + got, sizeof value - got, 0);
    if (n > 0) {
      got += static_cast<size_t>(n);
    } else if (errno != EINTR) {
      std::abort();  // as glibc's arc4random does when the kernel gives no randomness
    }
  }
  return value;
}
