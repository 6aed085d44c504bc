#include "live/job/http_server.hpp"

#include <poll.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <utility>  // before Asio: Boost 1.74's awaitable.hpp uses std::exchange without it

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

namespace ctwin::live {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

std::chrono::milliseconds ms(double seconds) { return std::chrono::milliseconds(static_cast<long long>(seconds * 1000)); }

//! An agent sends its headers with its connect: one that has not spoken within this may go at the
//! cap (a client starved of CPU for longer is as good as gone, and it retries).
constexpr std::chrono::seconds kSpeakGrace{1};
//! One that has sent nothing at all this long after it was accepted (an idle scanner, a client
//! stuck at its start) goes first: 2,000 of them ahead in the kernel's queue starved every agent
//! at a 1 s grace each (issue 50). An agent that loses its connection so connects again.
constexpr std::chrono::milliseconds kSilentGrace{100};
//! How many of the oldest waiting connections are looked at for a silent one (bounded work per drop).
constexpr int kSilentLookahead = 256;

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
  using Clock = std::chrono::steady_clock;
  using Since = std::pair<Clock::time_point, std::uint64_t>;  //!< a wait's start, the connection's id
  struct Entry {
    std::weak_ptr<Session> session;
    std::string peer;
    bool waiting = false;  //!< for its request line and headers
    Clock::time_point since{};  //!< the wait's start
  };
  asio::io_context io{1};
  tcp::acceptor acceptor{io};
  asio::executor_work_guard<asio::io_context::executor_type> busy{io.get_executor()};  //!< runs with no connection
  HttpLimits limits;
  Authorize authorize;
  Handler handler;
  std::size_t cap = 0;
  std::uint64_t next_id = 0;
  std::unordered_map<std::uint64_t, Entry> open;
  //! Connections waiting for their headers, oldest first: all of them, and each peer's. A peer
  //! with the most is found through `peers_by_waiting` (count, peer), so making room is O(log n)
  //! even in a join storm of 10,000 connections from one address.
  std::set<Since> waiting;
  std::unordered_map<std::string, std::set<Since>> waiting_by_peer;
  std::set<std::pair<std::size_t, std::string>> peers_by_waiting;
  std::atomic<std::uint64_t> served{0}, unauthorized{0}, timed_out{0}, dropped{0}, paused_count{0};
  std::atomic<std::size_t> accepted{0};  //!< open, or on their way to the io thread
  std::atomic<bool> stopping{false};
  std::thread thread, accepting;

  //! The accepting thread: it does nothing else, so the kernel's queue of connections never
  //! overflows while the io thread is busy. One accept per trip through the io thread's queue
  //! fell behind 6,000 agents joining at once on a loaded host: connects timed out.
  void accept_loop();
  //! From the accepting thread, at the cap: whether the io thread made room.
  bool room_made();
  void admit(tcp::socket socket);
  void set_waiting(std::uint64_t id, bool waiting);
  void forget(std::uint64_t id);
  //! Closes a connection that has waited for its headers past the grace, to make room: the
  //! oldest of the peer with the most, else the oldest of all. False when none has.
  bool make_room();
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

  //! Nothing of a request has arrived: none parsed, none in the buffer, none in the kernel's.
  bool silent() {
    beast::error_code ec;
    return (!parser || !parser->got_some()) && buffer.size() == 0 && stream.socket().available(ec) == 0 && !ec;
  }

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
    response.set(http::field::content_type, a.content_type);
    response.keep_alive(!then_close);
    response.body() = a.body;
    response.prepare_payload();
    stream.expires_after(ms(server.limits.write_deadline_s));
    if (then_close) return answer_and_close();
    http::async_write(stream, response, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) return self->fail(ec);
      ++self->server.served;
      self->read_header();  // keep-alive: the next request has its own header deadline
    });
  }

  //! The last answer on a connection: the server closes first, at once when the kernel takes the
  //! whole answer. Its TIME_WAIT costs nothing; a client that closed first would hold a port for a
  //! minute, and 10,000 agents behind one address (or one host, in the benches) ran out of ports.
  void answer_and_close() {
    std::ostringstream wire;
    wire << response;
    auto rest = std::make_shared<std::string>(wire.str());
    beast::error_code ec;
    stream.socket().non_blocking(true, ec);
    const std::size_t sent = ec ? 0 : stream.socket().write_some(asio::buffer(*rest), ec);
    if (ec && ec != asio::error::would_block && ec != asio::error::try_again) return fail(ec);
    if (sent == rest->size()) {
      ++server.served;
      return close();
    }
    rest->erase(0, sent);  // a client reading slowly: the rest within the write deadline
    asio::async_write(stream, asio::buffer(*rest), [self = shared_from_this(), rest](beast::error_code error, std::size_t) {
      if (error) return self->fail(error);
      ++self->server.served;
      self->close();
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

void HttpServer::Impl::accept_loop() {
  const int listening = acceptor.native_handle();
  while (!stopping) {
    if (accepted >= cap && !room_made()) {  // nobody to drop yet: the kernel's queue holds newcomers
      ++paused_count;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    pollfd ready{listening, POLLIN, 0};
    if (::poll(&ready, 1, 100) <= 0) continue;  // 100 ms: how soon a stop is seen
    while (accepted < cap) {
      auto socket = std::make_shared<tcp::socket>(io);
      beast::error_code ec;
      acceptor.accept(*socket, ec);  // non-blocking: would_block once the queue is empty
      if (ec == asio::error::would_block || ec == asio::error::try_again) break;
      if (ec) {  // out of descriptors, most likely: a pause, not a spin
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        break;
      }
      ++accepted;
      asio::post(io, [this, socket] { admit(std::move(*socket)); });
    }
  }
}

bool HttpServer::Impl::room_made() {
  auto made = std::make_shared<std::promise<bool>>();
  auto answer = made->get_future();
  asio::post(io, [this, made] { made->set_value(accepted < cap || make_room()); });
  return answer.wait_for(std::chrono::seconds(1)) == std::future_status::ready && answer.get();
}

void HttpServer::Impl::admit(tcp::socket socket) {
  beast::error_code ec;
  const auto remote = socket.remote_endpoint(ec);
  if (ec) return void(--accepted);  // gone already
  socket.set_option(tcp::no_delay(true), ec);  // headers and answer leave at once (no 40 ms Nagle stall)
  const std::uint64_t id = next_id++;
  auto session = std::make_shared<Session>(*this, std::move(socket), id);
  open[id] = {session, remote.address().to_string()};
  session->read_header();
}

void HttpServer::Impl::set_waiting(std::uint64_t id, bool now_waiting) {
  const auto it = open.find(id);
  if (it == open.end() || it->second.waiting == now_waiting) return;
  Entry& entry = it->second;
  auto& mine = waiting_by_peer[entry.peer];
  peers_by_waiting.erase({mine.size(), entry.peer});
  if (now_waiting) {
    entry.since = Clock::now();
    waiting.insert({entry.since, id});
    mine.insert({entry.since, id});
  } else {
    waiting.erase({entry.since, id});
    mine.erase({entry.since, id});
  }
  entry.waiting = now_waiting;
  if (mine.empty()) waiting_by_peer.erase(entry.peer);
  else peers_by_waiting.insert({mine.size(), entry.peer});
}

void HttpServer::Impl::forget(std::uint64_t id) {
  set_waiting(id, false);
  if (open.erase(id) != 0) --accepted;
}

bool HttpServer::Impl::make_room() {
  if (waiting.empty()) return false;
  // Every silent one past its grace goes at once (among the oldest looked at): a trip to the io
  // thread per connection dropped fell behind a flood that connects again as fast as it is closed.
  const auto silent_for = Clock::now() - kSilentGrace;
  std::vector<std::shared_ptr<Session>> silent;
  int looked = 0;
  for (auto it = waiting.begin(); it != waiting.end() && it->first <= silent_for && looked++ < kSilentLookahead; ++it) {
    const auto entry = open.find(it->second);
    if (auto session = entry == open.end() ? nullptr : entry->second.session.lock(); session && session->silent()) silent.push_back(std::move(session));
  }
  for (const auto& session : silent) ++dropped, session->close();  // each forgets itself
  if (!silent.empty()) return true;
  const auto grace_ended = Clock::now() - kSpeakGrace;
  const auto& hog = waiting_by_peer.at(peers_by_waiting.rbegin()->second);
  const Since victim = hog.begin()->first <= grace_ended ? *hog.begin() : *waiting.begin();
  if (victim.first > grace_ended) return false;
  ++dropped;
  const auto it = open.find(victim.second);
  if (const auto session = it->second.session.lock()) session->close();  // forgets it
  else forget(victim.second);
  return true;
}

HttpServer::HttpServer(const std::string& host, int port, HttpLimits limits, Authorize authorize, Handler handler)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.limits = limits;
  s.authorize = std::move(authorize);
  s.handler = std::move(handler);
  s.cap = static_cast<std::size_t>(std::clamp(descriptor_room() - 64, 8, std::max(limits.max_connections, 8)));
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
  if (!ec) s.acceptor.non_blocking(true, ec);
  if (ec) throw refuse(ec.message());
  s.thread = std::thread([&s] { s.io.run(); });
  s.accepting = std::thread([&s] { s.accept_loop(); });
}

HttpServer::~HttpServer() {
  // Stopped, then destroyed: the open connections go with the io_context's pending handlers.
  impl_->stopping = true;
  if (impl_->accepting.joinable()) impl_->accepting.join();
  impl_->io.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

int HttpServer::port() const {
  beast::error_code ec;
  const auto at = impl_->acceptor.local_endpoint(ec);
  return ec ? -1 : at.port();
}

HttpServer::Counts HttpServer::counts() const {
  return {impl_->served.load(), impl_->unauthorized.load(), impl_->timed_out.load(), impl_->dropped.load(), impl_->paused_count.load()};
}

}  // namespace ctwin::live
