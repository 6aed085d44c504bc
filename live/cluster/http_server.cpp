#include "live/cluster/http_server.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <utility>  // before Asio: Boost 1.74's awaitable.hpp uses std::exchange without it

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

namespace ctwin::live::cluster {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

std::chrono::milliseconds ms(double seconds) { return std::chrono::milliseconds(static_cast<long long>(seconds * 1000)); }

constexpr std::chrono::seconds kSpeakGrace{1};

//! A master of 10,000 agents needs more descriptors than a shell's default 1,024: the soft limit
//! goes up to the hard one. The connection cap stays below it, so that accept() keeps working.
int descriptor_room() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return 1024;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  return static_cast<int>(std::min<rlim_t>(limit.rlim_cur, 1 << 20));
}

}  // namespace

struct HttpServer::Impl {
  struct Entry {
    std::weak_ptr<Session> session;
    std::string peer;
    bool waiting = true;  //!< for its request line and headers
    std::chrono::steady_clock::time_point since{};  //!< the wait's start
  };
  asio::io_context io{1};
  tcp::acceptor acceptor{io};
  asio::steady_timer retry{io};
  HttpLimits limits;
  Authorize authorize;
  Handler handler;
  int cap = 0;
  std::uint64_t next_id = 0;
  std::map<std::uint64_t, Entry> open;  //!< by id: the oldest first
  std::unordered_map<std::string, int> waiting_by_peer;
  std::atomic<std::uint64_t> served{0}, unauthorized{0}, timed_out{0}, dropped{0};
  std::thread thread;

  void accept();
  void admit(tcp::socket socket);
  void set_waiting(std::uint64_t id, bool waiting);
  void forget(std::uint64_t id);
  //! Closes the oldest connection still waiting for its headers: of `peer` and waiting past the
  //! grace when a peer is given, else any.
  bool drop_oldest_waiting(const std::string* peer);
};

struct HttpServer::Session : std::enable_shared_from_this<HttpServer::Session> {
  Session(Impl& owner, tcp::socket socket, std::uint64_t number) : server(owner), stream(std::move(socket)), id(number) {}
  Impl& server;
  beast::tcp_stream stream;
  beast::flat_buffer buffer;
  std::optional<http::request_parser<http::string_body>> parser;
  http::response<http::string_body> response;
  std::uint64_t id;
  bool closed = false;

  void read_header() {
    server.set_waiting(id, true);
    parser.emplace();
    parser->header_limit(static_cast<std::uint32_t>(server.limits.max_header));
    parser->body_limit(server.limits.max_body);
    stream.expires_after(ms(server.limits.header_deadline_s));
    http::async_read_header(stream, buffer, *parser, [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_header(ec); });
  }

  void on_header(beast::error_code ec) {
    // A Content-Length past the limit is refused with the headers in hand: the token is judged first.
    const bool too_large = ec == http::error::body_limit;
    if (ec && !too_large) return fail(ec);
    server.set_waiting(id, false);
    const auto& request = parser->get();
    if (!server.authorize(std::string(request[http::field::authorization]))) {
      ++server.unauthorized;  // nothing of its body is read
      return answer({401, nlohmann::json{{"error", "wrong or missing job token (Authorization: Bearer ...)"}}.dump()}, true);
    }
    if (too_large || parser->is_done()) return on_body(ec);
    stream.expires_after(ms(server.limits.body_deadline_s));
    http::async_read(stream, buffer, *parser, [self = shared_from_this()](beast::error_code read, std::size_t) { self->on_body(read); });
  }

  void on_body(beast::error_code ec) {
    if (ec == http::error::body_limit) return answer({413, nlohmann::json{{"error", "the body is larger than the master takes"}}.dump()}, true);
    if (ec) return fail(ec);
    const auto& request = parser->get();
    HttpAnswer a;
    try {
      a = server.handler({std::string(request.method_string()), std::string(request.target()), request.body()});
    } catch (const std::exception& e) {
      a = {500, nlohmann::json{{"error", e.what()}}.dump()};
    }
    answer(a, !request.keep_alive());
  }

  void answer(const HttpAnswer& a, bool then_close) {
    response = {};
    response.version(11);
    response.result(static_cast<unsigned>(a.status));
    response.set(http::field::content_type, "application/json");
    response.keep_alive(!then_close);
    response.body() = a.body;
    response.prepare_payload();
    stream.expires_after(ms(server.limits.write_deadline_s));
    http::async_write(stream, response, [self = shared_from_this(), then_close](beast::error_code ec, std::size_t) {
      if (ec) return self->fail(ec);
      ++self->server.served;
      if (then_close) return self->close();
      self->read_header();  // keep-alive: the next request has its own header deadline
    });
  }

  void fail(beast::error_code ec) {
    if (ec == beast::error::timeout) ++server.timed_out;
    close();
  }

  void close() {
    if (closed) return;
    closed = true;
    beast::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream.socket().close(ignored);
    server.forget(id);
  }
};

void HttpServer::Impl::accept() {
  acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
    if (!acceptor.is_open()) return;
    if (ec) {  // out of descriptors, most likely: a short pause, not a spin
      retry.expires_after(std::chrono::milliseconds(100));
      retry.async_wait([this](beast::error_code) { accept(); });
      return;
    }
    admit(std::move(socket));
    accept();
  });
}

void HttpServer::Impl::admit(tcp::socket socket) {
  beast::error_code ec;
  const auto remote = socket.remote_endpoint(ec);
  if (ec) return;
  std::string peer = remote.address().to_string();
  socket.set_option(tcp::no_delay(true), ec);  // headers and answer leave at once (no 40 ms Nagle stall)
  if (const auto it = waiting_by_peer.find(peer); it != waiting_by_peer.end() && it->second >= limits.per_peer_waiting) drop_oldest_waiting(&peer);
  if (static_cast<int>(open.size()) >= cap && !drop_oldest_waiting(nullptr)) {
    ++dropped;  // every connection is mid-request: the newest waits for a retry
    socket.close(ec);
    return;
  }
  const std::uint64_t id = next_id++;
  auto session = std::make_shared<Session>(*this, std::move(socket), id);
  open[id] = {session, peer, false};
  session->read_header();
}

void HttpServer::Impl::set_waiting(std::uint64_t id, bool waiting) {
  const auto it = open.find(id);
  if (it == open.end() || it->second.waiting == waiting) return;
  it->second.waiting = waiting;
  it->second.since = std::chrono::steady_clock::now();
  if ((waiting_by_peer[it->second.peer] += waiting ? 1 : -1) <= 0) waiting_by_peer.erase(it->second.peer);
}

void HttpServer::Impl::forget(std::uint64_t id) {
  const auto it = open.find(id);
  if (it == open.end()) return;
  if (it->second.waiting && --waiting_by_peer[it->second.peer] <= 0) waiting_by_peer.erase(it->second.peer);
  open.erase(it);
}

bool HttpServer::Impl::drop_oldest_waiting(const std::string* peer) {
  // A peer's connections are dropped only once they have had a fair chance to speak: an agent
  // sends its headers with its connect, and 1,000 agents behind one address (a NAT, one test
  // host) arrive faster than they are read.
  const auto grace_ended = std::chrono::steady_clock::now() - kSpeakGrace;
  for (auto& [id, entry] : open) {
    if (!entry.waiting || (peer && (entry.peer != *peer || entry.since > grace_ended))) continue;
    ++dropped;
    if (const auto session = entry.session.lock()) session->close();  // forgets it: the loop ends here
    else forget(id);
    return true;
  }
  return false;
}

HttpServer::HttpServer(const std::string& host, int port, HttpLimits limits, Authorize authorize, Handler handler)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.limits = limits;
  s.authorize = std::move(authorize);
  s.handler = std::move(handler);
  s.cap = std::clamp(descriptor_room() - 64, 8, std::max(limits.max_connections, 8));
  const auto refuse = [&](const std::string& why) {
    return std::runtime_error("cannot listen on " + host + ":" + std::to_string(port) + " (" + why + ")");
  };
  beast::error_code ec;
  tcp::resolver resolver(s.io);
  const auto found = resolver.resolve(host, std::to_string(port), tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec || found.empty()) throw refuse("not an address of this host: " + ec.message());
  const tcp::endpoint at = found.begin()->endpoint();
  s.acceptor.open(at.protocol(), ec);
  if (!ec) s.acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) s.acceptor.bind(at, ec);
  // The kernel's queue of connections not yet accepted, as long as it allows: 1,000 agents join at once.
  if (!ec) s.acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw refuse(ec.message());
  s.accept();
  s.thread = std::thread([&s] { s.io.run(); });
}

HttpServer::~HttpServer() {
  // Stopped, then destroyed: the open connections go with the io_context's pending handlers.
  impl_->io.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

int HttpServer::port() const {
  beast::error_code ec;
  const auto at = impl_->acceptor.local_endpoint(ec);
  return ec ? -1 : at.port();
}

HttpServer::Counts HttpServer::counts() const {
  return {impl_->served.load(), impl_->unauthorized.load(), impl_->timed_out.load(), impl_->dropped.load()};
}

}  // namespace ctwin::live::cluster
