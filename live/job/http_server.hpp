#pragma once
//! The HTTP/1.1 server of the job master's API and of every /metrics (live_metrics.hpp), on Boost.Beast: one thread of asynchronous I/O, so a slow client
//! holds a socket and a few hundred bytes, never a worker. cpp-httplib gave each connection a
//! thread from a pool of 8 and timed each read on its own: 8 clients sending a header line every
//! 2 s held the whole pool, and no agent's report got through (issue 36).
//!
//! A connection is judged before anything is read from its body: its request line and headers
//! must arrive whole within `header_deadline_s` of its first wait, and its token must check, or
//! it is closed. While there is room, nobody is turned away: 10,000 agents joining at once, all
//! behind one address or not, is the job starting, not a flood. At `max_connections` (and never
//! past the descriptor limit) the server makes room from connections still waiting for their
//! headers, the ones a flood is made of: first every one that has sent nothing at all 100 ms after
//! it was accepted (idle connections ahead of an agent's in the kernel's queue), then the oldest of
//! the address holding the most, else the oldest of all, once it has had a second to speak. When none has, it stops accepting for a
//! moment and the kernel's queue holds the newcomers: a client waits, it is not refused.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace ctwin::live {

struct HttpLimits {
  double header_deadline_s = 5;   //!< request line and headers, in all (not per read)
  double body_deadline_s = 10;    //!< the body, once the headers are in and the token checks
  double write_deadline_s = 5;    //!< the answer, to a client that may not read it
  std::size_t max_body = 1 << 20;
  std::size_t max_header = 16 << 10;
  int max_connections = 1 << 20;  //!< capped further by the process's descriptor limit (less 64)
};

struct HttpRequest {
  std::string method, target, body;
};

struct HttpAnswer {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
};

class HttpServer {
 public:
  //! Checks a request's Authorization header before its body is read.
  using Authorize = std::function<bool(const std::string& authorization)>;
  //! Runs on the server's thread: it must be quick (the master's work under its lock is).
  using Handler = std::function<HttpAnswer(const HttpRequest&)>;
  //! Listens on `host`:`port` (0: any free port). Throws std::runtime_error when it cannot.
  HttpServer(const std::string& host, int port, HttpLimits limits, Authorize authorize, Handler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;
  int port() const;

  struct Counts {
    std::uint64_t served = 0;       //!< answers written
    std::uint64_t unauthorized = 0; //!< 401s
    std::uint64_t timed_out = 0;    //!< closed at a deadline
    std::uint64_t dropped = 0;      //!< closed at the cap, to make room, while waiting for headers
    std::uint64_t paused = 0;       //!< times accepting stopped at the cap with nobody to drop
  };
  Counts counts() const;

 private:
  struct Impl;
  struct Session;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ctwin::live
