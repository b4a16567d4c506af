// Errors as values. A function that can fail on user input returns Result<T> (or
// Status when there is no value); the message says what was wrong and where, ready
// to show to a user as it is, and the code (error_code.h) what kind of failure it is.
// Error{"message"} is an invalid argument, the common case; the named constructors
// (Error::NotFound("...")) give the others.
#pragma once

#include <string>
#include <utility>
#include <variant>

#include "wattcut/base/error_code.h"

namespace wattcut {

struct Error {
  std::string message;
  ErrorCode code = ErrorCode::kInvalidArgument;

  static Error InvalidArgument(std::string message) { return {std::move(message), ErrorCode::kInvalidArgument}; }
  static Error Malformed(std::string message) { return {std::move(message), ErrorCode::kMalformed}; }
  static Error NotFound(std::string message) { return {std::move(message), ErrorCode::kNotFound}; }
  static Error Conflict(std::string message) { return {std::move(message), ErrorCode::kConflict}; }
  static Error Corruption(std::string message) { return {std::move(message), ErrorCode::kCorruption}; }
  static Error Unavailable(std::string message) { return {std::move(message), ErrorCode::kUnavailable}; }
  static Error IOError(std::string message) { return {std::move(message), ErrorCode::kIOError}; }
  static Error DeadlineExceeded(std::string message) { return {std::move(message), ErrorCode::kDeadlineExceeded}; }
  static Error Aborted(std::string message) { return {std::move(message), ErrorCode::kAborted}; }
  static Error PermissionDenied(std::string message) { return {std::move(message), ErrorCode::kPermissionDenied}; }
  static Error DeviceError(std::string message) { return {std::move(message), ErrorCode::kDeviceError}; }

  // The same kind of failure, its message prefixed with where it happened.
  Error WithContext(const std::string& context) const { return {context + message, code}; }
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : state_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  const T& value() const& { return std::get<T>(state_); }
  T& value() & { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

  const Error& error() const { return std::get<Error>(state_); }

 private:
  std::variant<T, Error> state_;
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT: implicit by design

  static Status Ok() { return Status(); }
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool ok_ = true;
};

}  // namespace wattcut
