// Status and Result<T>: errors as values across module boundaries.
//
// A Status is either OK or a code with a human-readable message that says
// precisely what went wrong (file, offset, what was expected). Result<T>
// holds either a value or a non-OK Status. Both are cheap to move and are
// thread-compatible (no internal synchronisation).
#pragma once

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace radixserve {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // bad input from a caller or a user
  kNotFound,            // a file, key, tensor or plugin that does not exist
  kCorrupt,             // a file or message whose bytes are inconsistent
  kUnsupported,         // well-formed but not something we implement
  kOutOfRange,          // an index or length past a limit
  kResourceExhausted,   // out of KV slots, request slots, queue space, memory
  kFailedPrecondition,  // the system is not in a state that allows this
  kUnavailable,         // not ready yet or shutting down
  kIOError,             // the operating system refused
  kInternal,            // a bug: an invariant did not hold
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status Corrupt(std::string m) { return {StatusCode::kCorrupt, std::move(m)}; }
  static Status Unsupported(std::string m) { return {StatusCode::kUnsupported, std::move(m)}; }
  static Status OutOfRange(std::string m) { return {StatusCode::kOutOfRange, std::move(m)}; }
  static Status ResourceExhausted(std::string m) { return {StatusCode::kResourceExhausted, std::move(m)}; }
  static Status FailedPrecondition(std::string m) { return {StatusCode::kFailedPrecondition, std::move(m)}; }
  static Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
  static Status IOError(std::string m) { return {StatusCode::kIOError, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "CODE: message", or "OK".
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Holds a T or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) { assert(!std::get<Status>(v_).ok()); }  // NOLINT

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace radixserve

// Returns the Status of an expression from the enclosing function when it is not OK.
#define RS_RETURN_IF_ERROR(expr)                   \
  do {                                             \
    ::radixserve::Status rs_status_ = (expr);      \
    if (!rs_status_.ok()) return rs_status_;       \
  } while (0)

#define RS_CONCAT_INNER(a, b) a##b
#define RS_CONCAT(a, b) RS_CONCAT_INNER(a, b)
// RS_ASSIGN_OR_RETURN(auto x, MakeX()): assigns the value or returns the error.
#define RS_ASSIGN_OR_RETURN(lhs, expr)                                   \
  auto RS_CONCAT(rs_result_, __LINE__) = (expr);                         \
  if (!RS_CONCAT(rs_result_, __LINE__).ok())                             \
    return RS_CONCAT(rs_result_, __LINE__).status();                     \
  lhs = std::move(RS_CONCAT(rs_result_, __LINE__)).value()
