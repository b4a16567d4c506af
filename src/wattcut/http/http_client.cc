#include "wattcut/http/http_client.h"

#include <curl/curl.h>
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>

#include "wattcut/base/general_text.h"
#include "wattcut/base/printable_text.h"

namespace wattcut::http {

namespace {

// libcurl's global state, set up once per process before the first handle (it is not thread-safe).
Status InitCurlOnce() {
  static std::once_flag once;
  static CURLcode code = CURLE_OK;
  std::call_once(once, [] { code = curl_global_init(CURL_GLOBAL_DEFAULT); });
  if (code != CURLE_OK) return Error::Unavailable(std::string("libcurl does not start: ") + curl_easy_strerror(code));
  return Status::Ok();
}

long Milliseconds(double seconds) { return static_cast<long>(std::ceil(seconds * 1000.0)); }

bool StartsWith(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

// What a failed connect to a Unix socket means, from the file and the system error.
std::string UnixSocketProblem(const std::string& path, long os_errno) {
  struct stat file {};
  if (::lstat(path.c_str(), &file) != 0) return "no socket file there (is the agent running?)";
  if (!S_ISSOCK(file.st_mode)) return "the file is not a socket";
  switch (os_errno) {
    case ECONNREFUSED:
      return "Connection refused (nobody listens on the socket: a stopped agent left it behind?)";
    case EACCES:
    case EPERM:
      return "Permission denied (the socket's mode or group does not let this user connect)";
    default:
      return os_errno != 0 ? std::string(std::strerror(static_cast<int>(os_errno))) : "cannot connect";
  }
}

}  // namespace

struct HttpClient::Impl {
  HttpEndpoint endpoint;
  std::string description;
  std::mutex mutex;  // one call at a time on the handle (and its connection)
  CURL* handle = nullptr;
  curl_slist* headers = nullptr;  // without Content-Type
  curl_slist* json_headers = nullptr;
  char error_text[CURL_ERROR_SIZE] = {};

  ~Impl() {
    if (handle != nullptr) curl_easy_cleanup(handle);
    curl_slist_free_all(headers);
    curl_slist_free_all(json_headers);
  }

  // Sets every option of a request to `path` from scratch: a reset handle keeps its connection.
  void Prepare(std::string_view method, std::string_view path, std::string_view body) {
    curl_easy_reset(handle);
    error_text[0] = '\0';
    const std::string url =
        (endpoint.unix_socket.empty() ? endpoint.base_url : std::string("http://localhost")) + std::string(path);
    curl_easy_setopt(handle, CURLOPT_URL, url.c_str());
    if (!endpoint.unix_socket.empty()) curl_easy_setopt(handle, CURLOPT_UNIX_SOCKET_PATH, endpoint.unix_socket.c_str());
    curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, error_text);
    curl_easy_setopt(handle, CURLOPT_CONNECTTIMEOUT_MS, Milliseconds(endpoint.connect_timeout_s));
    curl_easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(handle, CURLOPT_TCP_NODELAY, 1L);
    if (!endpoint.basic_auth.empty()) {
      curl_easy_setopt(handle, CURLOPT_HTTPAUTH, static_cast<long>(CURLAUTH_BASIC));
      curl_easy_setopt(handle, CURLOPT_USERPWD, endpoint.basic_auth.c_str());
    }
    if (!endpoint.verify_tls) {
      curl_easy_setopt(handle, CURLOPT_SSL_VERIFYPEER, 0L);
      curl_easy_setopt(handle, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    const bool sends_body = !body.empty() || method == "POST" || method == "PUT" || method == "PATCH";
    curl_easy_setopt(handle, CURLOPT_HTTPHEADER, sends_body ? json_headers : headers);
    if (method == "GET") {
      curl_easy_setopt(handle, CURLOPT_HTTPGET, 1L);
    } else if (method == "HEAD") {
      curl_easy_setopt(handle, CURLOPT_NOBODY, 1L);
    } else {
      curl_easy_setopt(handle, CURLOPT_CUSTOMREQUEST, std::string(method).c_str());
    }
    if (sends_body) {
      // POSTFIELDS is not copied: `body` outlives the transfer (it is the caller's argument).
      curl_easy_setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
      curl_easy_setopt(handle, CURLOPT_POSTFIELDS, body.empty() ? "" : body.data());
    }
  }

  // The error of a transfer that did not complete.
  Error TransferError(CURLcode code, std::string_view method, std::string_view path) {
    const std::string detail = error_text[0] != '\0' ? std::string(error_text) : curl_easy_strerror(code);
    const std::string what = std::string(method) + " " + PrintableText(std::string(path));
    switch (code) {
      case CURLE_URL_MALFORMAT:
      case CURLE_UNSUPPORTED_PROTOCOL:
        return Error::InvalidArgument(description + ": " + what + ": " + detail);
      case CURLE_COULDNT_CONNECT:
        if (!endpoint.unix_socket.empty()) {
          long os_errno = 0;
          curl_easy_getinfo(handle, CURLINFO_OS_ERRNO, &os_errno);
          return Error::Unavailable("cannot reach " + description + ": " +
                                    UnixSocketProblem(endpoint.unix_socket, os_errno));
        }
        return Error::Unavailable("cannot reach " + description + ": " + detail);
      case CURLE_OPERATION_TIMEDOUT:
        return Error::Unavailable("cannot reach " + description + ": " + what + " had no answer within the " +
                                  "timeout (" + detail + ")");
      default:
        return Error::Unavailable("cannot reach " + description + ": " + what + ": " + detail);
    }
  }
};

namespace {

struct BodySink {
  std::string* body;
  size_t max_bytes;
  bool too_large = false;
};

size_t AppendBody(char* data, size_t size, size_t count, void* user) {
  auto* sink = static_cast<BodySink*>(user);
  const size_t bytes = size * count;
  if (bytes > sink->max_bytes - sink->body->size()) {
    sink->too_large = true;
    return 0;  // ends the transfer with CURLE_WRITE_ERROR
  }
  sink->body->append(data, bytes);
  return bytes;
}

struct LineSink {
  CURL* handle;
  const std::function<bool(std::string_view)>* on_line;
  size_t max_bytes;
  std::chrono::steady_clock::duration stall_limit;
  std::string pending;        // a line not yet ended
  std::string* refusal_body;  // the body of a non-2xx answer
  std::chrono::steady_clock::time_point last_byte = std::chrono::steady_clock::now();
  bool stopped = false;  // on_line returned false
  bool stalled = false;
  bool too_large = false;
};

// libcurl's progress callback, called about once a second while nothing arrives: ends a stalled
// stream (libcurl's own low-speed check averages over several seconds).
int CheckStall(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* sink = static_cast<LineSink*>(user);
  if (std::chrono::steady_clock::now() - sink->last_byte < sink->stall_limit) return 0;
  sink->stalled = true;
  return 1;  // ends the transfer with CURLE_ABORTED_BY_CALLBACK
}

bool Refused(CURL* handle) {
  long status = 0;
  curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
  return status < 200 || status >= 300;
}

size_t SplitLines(char* data, size_t size, size_t count, void* user) {
  auto* sink = static_cast<LineSink*>(user);
  const size_t bytes = size * count;
  sink->last_byte = std::chrono::steady_clock::now();
  if (Refused(sink->handle)) {
    BodySink body{sink->refusal_body, sink->max_bytes};
    const size_t taken = AppendBody(data, size, count, &body);
    sink->too_large = body.too_large;
    return taken;
  }
  std::string_view chunk(data, bytes);
  while (!chunk.empty()) {
    const size_t end = chunk.find('\n');
    if (end == std::string_view::npos) {
      if (chunk.size() > sink->max_bytes - sink->pending.size()) {
        sink->too_large = true;
        return 0;
      }
      sink->pending.append(chunk);
      break;
    }
    sink->pending.append(chunk.substr(0, end));
    chunk.remove_prefix(end + 1);
    const bool go_on = (*sink->on_line)(sink->pending);
    sink->pending.clear();
    if (!go_on) {
      sink->stopped = true;
      return 0;
    }
  }
  return bytes;
}

}  // namespace

Result<std::unique_ptr<HttpClient>> HttpClient::Create(HttpEndpoint endpoint) {
  if (endpoint.unix_socket.empty() == endpoint.base_url.empty()) {
    return Error::InvalidArgument("an HTTP endpoint is a Unix socket path or a base URL, exactly one of the two");
  }
  if (!endpoint.base_url.empty() && !StartsWith(endpoint.base_url, "http://") &&
      !StartsWith(endpoint.base_url, "https://")) {
    return Error::InvalidArgument("base URL '" + PrintableText(endpoint.base_url) +
                                  "' must start with http:// or https://");
  }
  if (!(endpoint.connect_timeout_s > 0 && endpoint.connect_timeout_s < 1e6 && endpoint.timeout_s > 0 &&
        endpoint.timeout_s < 1e6)) {
    return Error::InvalidArgument("HTTP timeouts must be positive numbers of seconds below 1000000");
  }
  if (endpoint.max_response_bytes == 0) return Error::InvalidArgument("max_response_bytes must be positive");
  // "http://host:1/" + "/v1" must not become "http://host:1//v1".
  const size_t scheme_end = endpoint.base_url.find("//") + 2;
  while (endpoint.base_url.size() > scheme_end + 1 && endpoint.base_url.back() == '/') endpoint.base_url.pop_back();
  if (Status s = InitCurlOnce(); !s.ok()) return s.error();
  auto impl = std::make_unique<Impl>();
  impl->description = endpoint.unix_socket.empty() ? endpoint.base_url : "unix:" + endpoint.unix_socket;
  impl->handle = curl_easy_init();
  if (impl->handle == nullptr) return Error::Unavailable("libcurl cannot create a handle for " + impl->description);
  for (curl_slist** list : {&impl->headers, &impl->json_headers}) {
    // No "Expect: 100-continue" wait before a body: the services answer at once.
    *list = curl_slist_append(*list, "Expect:");
    if (!endpoint.bearer_token.empty()) {
      *list = curl_slist_append(*list, ("Authorization: Bearer " + endpoint.bearer_token).c_str());
    }
  }
  impl->json_headers = curl_slist_append(impl->json_headers, "Content-Type: application/json");
  impl->endpoint = std::move(endpoint);
  return std::unique_ptr<HttpClient>(new HttpClient(std::move(impl)));
}

HttpClient::HttpClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpClient::~HttpClient() = default;

const std::string& HttpClient::description() const { return impl_->description; }

namespace {

HttpResponse Answer(CURL* handle, std::string body) {
  HttpResponse response;
  long status = 0;
  curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
  response.status = static_cast<int>(status);
  char* content_type = nullptr;
  if (curl_easy_getinfo(handle, CURLINFO_CONTENT_TYPE, &content_type) == CURLE_OK && content_type != nullptr) {
    response.content_type = content_type;
  }
  response.body = std::move(body);
  return response;
}

}  // namespace

Result<HttpResponse> HttpClient::Request(std::string_view method, std::string_view path, std::string_view body) {
  Impl& impl = *impl_;
  std::lock_guard lock(impl.mutex);
  impl.Prepare(method, path, body);
  std::string received;
  BodySink sink{&received, impl.endpoint.max_response_bytes};
  curl_easy_setopt(impl.handle, CURLOPT_TIMEOUT_MS, Milliseconds(impl.endpoint.timeout_s));
  curl_easy_setopt(impl.handle, CURLOPT_WRITEFUNCTION, AppendBody);
  curl_easy_setopt(impl.handle, CURLOPT_WRITEDATA, &sink);
  const CURLcode code = curl_easy_perform(impl.handle);
  if (sink.too_large) {
    return Error::Malformed(impl.description + ": the answer to " + std::string(method) + " " +
                            PrintableText(std::string(path)) + " is larger than " +
                            std::to_string(impl.endpoint.max_response_bytes) + " bytes");
  }
  if (code != CURLE_OK) return impl.TransferError(code, method, path);
  return Answer(impl.handle, std::move(received));
}

Result<HttpResponse> HttpClient::StreamLines(std::string_view path,
                                             const std::function<bool(std::string_view line)>& on_line) {
  Impl& impl = *impl_;
  std::lock_guard lock(impl.mutex);
  impl.Prepare("GET", path, {});
  std::string refusal;
  LineSink sink{impl.handle,
                &on_line,
                impl.endpoint.max_response_bytes,
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(impl.endpoint.timeout_s)),
                {},
                &refusal};
  curl_easy_setopt(impl.handle, CURLOPT_WRITEFUNCTION, SplitLines);
  curl_easy_setopt(impl.handle, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(impl.handle, CURLOPT_XFERINFOFUNCTION, CheckStall);
  curl_easy_setopt(impl.handle, CURLOPT_XFERINFODATA, &sink);
  curl_easy_setopt(impl.handle, CURLOPT_NOPROGRESS, 0L);
  const CURLcode code = curl_easy_perform(impl.handle);
  if (sink.too_large) {
    return Error::Malformed(impl.description + ": a line of GET " + PrintableText(std::string(path)) +
                            " is longer than " + std::to_string(impl.endpoint.max_response_bytes) + " bytes");
  }
  if (sink.stopped) return Answer(impl.handle, {});
  if (sink.stalled) {
    return Error::DeadlineExceeded(impl.description + ": the stream GET " + PrintableText(path) +
                                   " stalled: nothing for " + GeneralText(impl.endpoint.timeout_s) + " s");
  }
  if (code != CURLE_OK) return impl.TransferError(code, "GET", path);
  if (!Refused(impl.handle) && !sink.pending.empty()) on_line(sink.pending);  // a last line without '\n'
  return Answer(impl.handle, std::move(refusal));
}

}  // namespace wattcut::http
