// The test helpers every layer's tests share: temporary folders and environment variables.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>

#include "util/env_vars.h"

namespace stoker::test {

// A fresh folder under $STOKER_TEST_TMP (CTest sets it to the build's test-tmp), else /tmp,
// named `prefix` and six random characters; removed with everything in it by the destructor.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "stoker") {
    const std::filesystem::path parent = util::env_string(util::kTestTmp, "/tmp");
    std::filesystem::create_directories(parent);
    std::string pattern = (parent / (prefix + "-XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("mkdtemp " + pattern + " failed");
    }
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Sets (or, with nullptr, unsets) an environment variable for the guard's lifetime. An empty
// variable is put back as unset: stoker reads the two alike.
class EnvGuard {
 public:
  EnvGuard(const char* name, const char* value) : name_(name), old_(util::env_text(name)) {
    if (value == nullptr) {
      ::unsetenv(name);
    } else {
      ::setenv(name, value, 1);
    }
  }
  ~EnvGuard() {
    if (old_) {
      ::setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace stoker::test
