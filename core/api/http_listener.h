// HttpListener: accepts TCP connections and serves each on its own thread.
//
// Thread per connection keeps one slow or stalled client from delaying any
// other (each blocks only its own thread; writes time out), and lets a
// handler sleep in poll() on its request's outputs and its socket. Threads
// are cheap at the scale of a model server (hundreds of streams); beyond
// max_connections new clients get 503 at once. Start/Stop from one thread;
// the handler runs concurrently on connection threads.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "core/api/http_connection.h"
#include "core/util/status.h"

namespace radixserve::api {

class HttpListener {
 public:
  // Serves one request; must write exactly one response on the connection.
  using Handler = std::function<void(const HttpRequest&, HttpConnection&)>;

  struct Options {
    std::string host = "127.0.0.1";
    int port = 0;                 // 0: an ephemeral port (see port())
    int backlog = 1024;
    int max_connections = 4096;
    HttpLimits limits;
  };

  HttpListener() = default;
  ~HttpListener();  // Stop()
  HttpListener(const HttpListener&) = delete;
  HttpListener& operator=(const HttpListener&) = delete;

  // Binds, listens and starts accepting. IOError when the address cannot be bound.
  Status Start(const Options& options, Handler handler);
  // Stops accepting, shuts every open connection down and waits for their threads.
  void Stop();

  int port() const { return port_; }
  bool stopping() const { return stopping_.load(std::memory_order_relaxed); }
  int active_connections();

 private:
  void AcceptLoop();
  void Serve(int fd);

  Options options_;
  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread accept_thread_;

  std::mutex mu_;
  std::condition_variable all_closed_;
  std::set<int> open_fds_;  // guarded by mu_; shut down by Stop() to wake their threads
  int live_threads_ = 0;    // guarded by mu_; connection threads not yet finished
};

}  // namespace radixserve::api
