// The metrics (prometheus-cpp) on the exposer's own threads: a client that trickles its request a
// byte every 150 ms (which once held the supervisor's loop for 16 s) delays neither publishing nor
// another scraper; counters never go down when a restore rolls progress back; and the exposition
// passes `promtool check metrics`.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "live/job/live_metrics.hpp"

using ctwin::live::LiveMetrics;
using ctwin::live::MetricsSnapshot;
using Clock = std::chrono::steady_clock;

namespace {

int connect_to(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  return fd;
}

std::string get(int port, const std::string& path) {
  const int fd = connect_to(port);
  timeval patience{20, 0};  // a blocked scrape fails the test rather than hanging it
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience);
  const std::string request = "GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string answer;
  char buffer[4096];
  for (ssize_t n; (n = ::recv(fd, buffer, sizeof buffer, 0)) > 0;) answer.append(buffer, static_cast<std::size_t>(n));
  ::close(fd);
  return answer;
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }


std::string body_of(const std::string& answer) {
  const auto at = answer.find("\r\n\r\n");
  return at == std::string::npos ? "" : answer.substr(at + 4);
}

//! The value of the sample `series` (the whole line's start) in `text`; -1 when absent.
double sample(const std::string& text, const std::string& series) {
  for (auto at = text.find(series); at != std::string::npos; at = text.find(series, at + 1))
    if ((at == 0 || text[at - 1] == '\n') && text[at + series.size()] == ' ') return std::stod(text.substr(at + series.size() + 1));
  return -1;
}

const std::string kLabels = "host=\"gpu-17\",job=\"train\",node=\"3\"";

MetricsSnapshot snapshot(double productive_s, double lost_s, double rolled_back_s) {
  MetricsSnapshot s;
  s.ledger[ctwin::Category::Productive] = static_cast<ctwin::Micros>(productive_s * 1e6);
  s.ledger[ctwin::Category::LostProgress] = static_cast<ctwin::Micros>(lost_s * 1e6);
  s.rolled_back_us = static_cast<ctwin::Micros>(rolled_back_s * 1e6);
  s.step = 10;
  s.interruptions["software_bug"] = 1;
  s.uncharged_s = 2.5;  // e.g. a job still gathering its nodes
  s.report_age_s[0] = 0.4;
  s.gpus.resize(2);
  s.gpus[0].temperature_c = 61;
  s.gpu_identities = {{"GPU-5f0b7a0e-8d9b-4c6a-9a43-b2f1c4a1e001", "00000000:18:00.0", "NVIDIA H100 80GB HBM3"}};  // GPU 1: none known
  s.forecast = MetricsSnapshot::Forecast{0.7, {100, 120, 150}, {0.8, 0.85, 0.9}, {2, 3, 5}};  // the master's --forecast
  return s;
}

}  // namespace

TEST_CASE("live metrics: counters never decrease across a rollback, and promtool accepts them", "[live][supervisor][network][process]") {
  LiveMetrics metrics("127.0.0.1", 0, {"train", "3", "gpu-17"});
  metrics.publish(snapshot(10, 0, 0));
  const std::string before = body_of(get(metrics.port(), "/metrics"));
  // A restore rolls 3 s of productive time back: the ledger moves them to lost progress.
  metrics.publish(snapshot(7, 3, 3));
  const std::string after = body_of(get(metrics.port(), "/metrics"));
  INFO(after);
  const std::string productive = "ctwin_ledger_seconds_total{" + kLabels + ",category=\"productive\"}";
  const std::string lost = "ctwin_ledger_seconds_total{" + kLabels + ",category=\"lost_progress\"}";
  CHECK(sample(before, productive) == Approx(10));
  CHECK(sample(after, productive) == Approx(10));  // as charged: it never goes down
  CHECK(sample(after, lost) == Approx(0));
  CHECK(sample(after, "ctwin_rolled_back_seconds_total{" + kLabels + "}") == Approx(3));
  CHECK(sample(after, "ctwin_goodput_ratio{" + kLabels + "}") == Approx(0.7));
  CHECK(after.find("ctwin_build_info{" + kLabels + ",version=") != std::string::npos);
  CHECK(after.find("ctwin_interruptions_total{" + kLabels + ",class=\"software_bug\"}") != std::string::npos);
  CHECK(sample(after, "ctwin_uncharged_seconds{" + kLabels + "}") == Approx(2.5));
  CHECK(sample(after, "ctwin_job_node_report_age_seconds{" + kLabels + ",rank=\"0\"}") == Approx(0.4));
  CHECK(sample(after, "ctwin_forecast_remaining_wall_seconds{" + kLabels + ",percentile=\"95\"}") == Approx(150));
  CHECK(sample(after, "ctwin_forecast_final_goodput_ratio{" + kLabels + ",percentile=\"5\"}") == Approx(0.8));
  CHECK(sample(after, "ctwin_forecast_interruptions_per_day{" + kLabels + ",percentile=\"50\"}") == Approx(3));
  CHECK(sample(after, "ctwin_forecast_goodput_to_date_ratio{" + kLabels + "}") == Approx(0.7));
  // A GPU's series carry dcgm-exporter's identity labels, where NVML gave them.
  const std::string temperature = "ctwin_gpu_reading{" + kLabels + ",UUID=\"GPU-5f0b7a0e-8d9b-4c6a-9a43-b2f1c4a1e001\",gpu=\"0\",kind=\"temperature_celsius\","
                                  "model_name=\"NVIDIA H100 80GB HBM3\",pci_bus_id=\"00000000:18:00.0\"}";
  CHECK(sample(after, temperature) == Approx(61));
  CHECK(sample(after, "ctwin_gpu_lost{" + kLabels + ",gpu=\"1\"}") == Approx(0));
  // Prometheus' own linter: names, types, _total on counters, units.
  const std::string file = "/tmp/ctwin-metrics-" + std::to_string(::getpid()) + ".txt";
  std::ofstream(file) << after;
  const int status = std::system(("promtool check metrics < " + file + " > " + file + ".out 2>&1").c_str());
  std::ifstream said(file + ".out");
  const std::string lint((std::istreambuf_iterator<char>(said)), std::istreambuf_iterator<char>());
  std::remove(file.c_str());
  std::remove((file + ".out").c_str());
  INFO(lint);
  CHECK(status == 0);
  CHECK(lint.empty());
}

TEST_CASE("live metrics: a client that trickles its request delays neither publishing nor other scrapers", "[live][supervisor][network][process]") {
  LiveMetrics server("127.0.0.1", 0, {"train", "0", "h"});
  server.publish(snapshot(1, 0, 0));
  // The slow client: a byte every 150 ms, for 12 s, never finishing its request.
  std::atomic<bool> stop{false};
  std::thread slow([&] {
    const int fd = connect_to(server.port());
    for (int i = 0; i < 80 && !stop; ++i) {
      if (::send(fd, "G", 1, MSG_NOSIGNAL) != 1) break;  // dropped: the server closed it
      std::this_thread::sleep_for(std::chrono::milliseconds(150));
    }
    ::close(fd);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // it is being served now
  const auto t0 = Clock::now();
  for (int i = 0; i < 100; ++i) server.publish(snapshot(1 + i, 0, 0));
  CHECK(seconds_since(t0) < 1.0);  // atomics and a mutex: never the client's pace
  const auto t1 = Clock::now();
  const std::string answer = get(server.port(), "/metrics");
  const double waited = seconds_since(t1);
  stop = true;
  slow.join();
  CHECK(answer.find("200 OK") != std::string::npos);
  CHECK(sample(body_of(answer), "ctwin_ledger_seconds_total{host=\"h\",job=\"train\",node=\"0\",category=\"productive\"}") == Approx(100));
  CHECK(waited < 6.0);  // long before the slow client's 12 s of trickling end
  CHECK(get(server.port(), "/other").find("404") != std::string::npos);
}

TEST_CASE("live metrics: 200 connections trickling their headers block no scrape", "[live][supervisor][network]") {
  // prometheus-cpp's exposer (civetweb, 4 threads) answered nothing beside 200 of these.
  LiveMetrics server("127.0.0.1", 0, {"train", "0", "h"});
  server.publish(snapshot(5, 0, 0));
  std::vector<int> slow;
  for (int i = 0; i < 200; ++i) {
    slow.push_back(connect_to(server.port()));
    ::send(slow.back(), "GET /metrics HTTP/1.1\r\nHost: x\r\n", 33, MSG_NOSIGNAL);  // and never the blank line
  }
  for (int i = 0; i < 5; ++i) {
    const std::string answer = get(server.port(), "/metrics");
    CHECK(answer.rfind("HTTP/1.1 200 OK", 0) == 0);
    CHECK(answer.find("Content-Type: text/plain; version=0.0.4") != std::string::npos);
    CHECK(sample(body_of(answer), "ctwin_ledger_seconds_total{host=\"h\",job=\"train\",node=\"0\",category=\"productive\"}") == Approx(5));
  }
  for (const int fd : slow) ::close(fd);
}

TEST_CASE("live metrics: a rank no agent holds any more shows no report age", "[live][supervisor][network]") {
  LiveMetrics server("127.0.0.1", 0, {"train", "master", "h"});
  MetricsSnapshot s = snapshot(1, 0, 0);
  s.report_age_s = {{0, 0.4}, {1, 31.0}};
  server.publish(s);
  const std::string series = "ctwin_job_node_report_age_seconds{host=\"h\",job=\"train\",node=\"master\",rank=\"1\"}";
  CHECK(sample(body_of(get(server.port(), "/metrics")), series) == Approx(31.0));
  s.report_age_s = {{0, 0.2}};  // rank 1 vacated: a stale 31 s would read as a node going silent
  server.publish(s);
  const std::string after = body_of(get(server.port(), "/metrics"));
  CHECK(sample(after, series) == -1);
  CHECK(after.find("rank=\"0\"} 0.2") != std::string::npos);
}
