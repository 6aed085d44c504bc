#pragma once
//! The master's HTTP/1.1 server, on Boost.Beast: one thread of asynchronous I/O, so a slow client
//! holds a socket and a few hundred bytes, never a worker. cpp-httplib gave each connection a
//! thread from a pool of 8 and timed each read on its own: 8 clients sending a header line every
//! 2 s held the whole pool, and no agent's report got through (issue 36).
//!
//! A connection is judged before anything is read from its body: its request line and headers
//! must arrive whole within `header_deadline_s` of its first wait, and its token must check, or
//! it is closed. Connections still waiting for their headers are the ones a flood is made of:
//! past `per_peer_waiting` of them from one address, its oldest that has waited a second is
//! closed (an agent's headers come with its connect: a burst of agents behind one address is
//! not a flood); past `max_connections` in all, the oldest waiting one is closed to make room.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace ctwin::live::cluster {

struct HttpLimits {
  double header_deadline_s = 5;   //!< request line and headers, in all (not per read)
  double body_deadline_s = 10;    //!< the body, once the headers are in and the token checks
  double write_deadline_s = 5;    //!< the answer, to a client that may not read it
  std::size_t max_body = 1 << 20;
  std::size_t max_header = 16 << 10;
  int max_connections = 4096;     //!< capped further by the process's descriptor limit
  int per_peer_waiting = 64;      //!< connections one address may hold before its headers are in
};

struct HttpRequest {
  std::string method, target, body;
};

struct HttpAnswer {
  int status = 200;
  std::string body;  //!< JSON
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
    std::uint64_t dropped = 0;      //!< closed to make room while waiting for headers, or refused at the cap
  };
  Counts counts() const;

 private:
  struct Impl;
  struct Session;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ctwin::live::cluster
