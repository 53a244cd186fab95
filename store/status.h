// Status: the result of a store operation that can fail (leveldb-style, no exceptions).
// Contract: a plain value type; copyable, thread-compatible, allocation only on error.
#pragma once

#include <string>
#include <utility>

namespace nvrtc_cache::store {

class [[nodiscard]] Status {
 public:
  enum class Code { kOk, kNotFound, kCorruption, kIoError, kFull, kReadOnly, kInvalidArgument };

  Status() = default;
  static Status ok() { return {}; }
  static Status not_found(std::string m) { return {Code::kNotFound, std::move(m)}; }
  static Status corruption(std::string m) { return {Code::kCorruption, std::move(m)}; }
  static Status io_error(std::string m) { return {Code::kIoError, std::move(m)}; }
  static Status full(std::string m) { return {Code::kFull, std::move(m)}; }
  static Status read_only(std::string m) { return {Code::kReadOnly, std::move(m)}; }
  static Status invalid_argument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }

  bool is_ok() const { return code_ == Code::kOk; }
  explicit operator bool() const { return is_ok(); }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  Status(Code c, std::string m) : code_(c), message_(std::move(m)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

}  // namespace nvrtc_cache::store
