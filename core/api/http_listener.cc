#include "core/api/http_listener.h"

#include <arpa/inet.h>
#include <glog/logging.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

namespace radixserve::api {

HttpListener::~HttpListener() { Stop(); }

Status HttpListener::Start(const Options& options, Handler handler) {
  options_ = options;
  handler_ = std::move(handler);
  stopping_ = false;

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* addrs = nullptr;
  std::string port_text = std::to_string(options.port);
  int rc = getaddrinfo(options.host.empty() ? nullptr : options.host.c_str(), port_text.c_str(), &hints, &addrs);
  if (rc != 0) return Status::InvalidArgument("cannot resolve host \"" + options.host + "\": " + gai_strerror(rc));
  std::string last_error = "no address";
  for (addrinfo* a = addrs; a; a = a->ai_next) {
    int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, options.backlog) == 0) {
      listen_fd_ = fd;
      break;
    }
    last_error = std::strerror(errno);
    close(fd);
  }
  freeaddrinfo(addrs);
  if (listen_fd_ < 0)
    return Status::IOError("cannot listen on " + options.host + ":" + port_text + ": " + last_error);

  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &len);
  port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  accept_thread_ = std::thread([this] { AcceptLoop(); });
  return Status::Ok();
}

void HttpListener::Stop() {
  if (listen_fd_ < 0) return;
  stopping_ = true;
  shutdown(listen_fd_, SHUT_RDWR);  // wakes accept()
  if (accept_thread_.joinable()) accept_thread_.join();
  close(listen_fd_);
  listen_fd_ = -1;
  std::unique_lock<std::mutex> lock(mu_);
  for (int fd : open_fds_) shutdown(fd, SHUT_RDWR);  // wakes reads and waits; handlers abort their requests
  all_closed_.wait(lock, [this] { return live_threads_ == 0; });
}

int HttpListener::active_connections() {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(open_fds_.size());
}

void HttpListener::AcceptLoop() {
  while (!stopping_) {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (stopping_) break;
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE) {  // out of descriptors: back off instead of spinning
        LOG(WARNING) << "accept: " << std::strerror(errno);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        continue;
      }
      if (errno == EINVAL) break;  // shut down
      LOG(WARNING) << "accept: " << std::strerror(errno);
      continue;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));  // SSE events go out as they are written
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (static_cast<int>(open_fds_.size()) >= options_.max_connections) {
        static constexpr char kBusy[] =
            "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\n"
            "Retry-After: 1\r\nContent-Length: 111\r\n\r\n{\"error\": {\"message\": \"too many connections\", \"type\": "
            "\"service_unavailable_error\", \"param\": null, \"code\": 503}}";
        ssize_t ignored = send(fd, kBusy, sizeof(kBusy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        (void)ignored;
        close(fd);
        continue;
      }
      open_fds_.insert(fd);
      ++live_threads_;
    }
    try {
      std::thread([this, fd] { Serve(fd); }).detach();
    } catch (const std::system_error& e) {
      LOG(WARNING) << "cannot start a connection thread: " << e.what();
      std::lock_guard<std::mutex> lock(mu_);
      open_fds_.erase(fd);
      --live_threads_;
      close(fd);
    }
  }
}

void HttpListener::Serve(int fd) {
  {
    HttpConnection conn(fd, options_.limits);
    HttpRequest request;
    while (!stopping_) {
      if (conn.ReadRequest(&request) != HttpConnection::ReadResult::kRequest) break;
      handler_(request, conn);
      if (conn.close_after_response()) break;
    }
    // Leave open_fds_ before conn closes the descriptor, so Stop() never shuts down a reused number.
    std::lock_guard<std::mutex> lock(mu_);
    open_fds_.erase(fd);
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (--live_threads_ == 0) all_closed_.notify_all();  // the thread's last touch of this object
}

}  // namespace radixserve::api
