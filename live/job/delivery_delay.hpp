#pragma once
//! How long an agent's report spent in queues before the master read it. A report's ages (a fault's,
//! a trainer line's) count back from when it left the agent; the master dated them from when it read
//! the report, so a report held up (a busy agent or master, a slow network) made its fault look
//! later than a peer's that came straight through, and blamed the peer (CI, 2 cores under load: node
//! 0's collective error, 30 ms after node 1's abort, was taken for the cause).
//!
//! Each report says when it left by the agent's steady clock. The gap to the master's steady clock
//! on arrival is the clocks' offset plus the delivery time; its smallest value over the last one or
//! two minutes is the offset plus the quickest delivery (as NTP's minimum filter), and a report's gap
//! beyond that is its own delay. Steady clocks never jump; the window bounds their drift (50 ppm: 6 ms).

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>

namespace ctwin::live {

class DeliveryDelay {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr auto kWindow = std::chrono::seconds(60);  //!< the minimum is kept over one to two of these

  //! The delay of a report that left at `sent_us` (the agent's steady clock, microseconds) and was
  //! read at `read`, beyond its agent's quickest recent one; zero for the quickest (and the first).
  Clock::duration excess(std::int64_t sent_us, Clock::time_point read) {
    const std::int64_t gap = std::chrono::duration_cast<std::chrono::microseconds>(read.time_since_epoch()).count() - sent_us;
    if (!window_start_ || read - *window_start_ >= kWindow) {
      previous_ = window_start_ && read - *window_start_ < 2 * kWindow ? current_ : std::nullopt;
      current_ = gap;
      window_start_ = read;
    } else {
      current_ = std::min(*current_, gap);
    }
    // A delay past the window is not believed (a stamp from a broken clock would date a fault years back).
    const auto excess = std::chrono::microseconds(gap - std::min(*current_, previous_.value_or(*current_)));
    return std::min<Clock::duration>(excess, kWindow);
  }

 private:
  std::optional<Clock::time_point> window_start_;
  std::optional<std::int64_t> current_, previous_;  //!< the smallest gap in this window and the one before
};

}  // namespace ctwin::live
