#pragma once
//! The faults a test injects into a CPU precheck, as its command lines spell them; parsed here and
//! nowhere else. Each command accepts a subset (`allowed`) and says which when it is given another.
//!   slow=F    compute F times slower (F > 1)           delay=S  each burn-in S seconds longer
//!   noisy=S   S seconds longer in rounds 0 and 1 only  stuck    the process stops answering
//!   hang      collectives never answer                 corrupt  GEMM results come back wrong
//!   memory=F  a fraction F of device memory already in use (0 < F <= 1)

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace ctwin::live {

struct Injection {
  enum class Kind { Slow, Delay, Noisy, Stuck, Hang, Corrupt, Memory };
  Kind kind;
  double value = 0;  //!< F or S; unused for stuck, hang and corrupt
  //! As written: "slow=4", "stuck".
  std::string text() const;
};

//! `text` as one of `allowed`; nullopt when it is none of them (or its value is out of range).
std::optional<Injection> parse_injection(std::string_view text, std::initializer_list<Injection::Kind> allowed);
//! "slow=F, delay=S or stuck": the spellings of `allowed`, for an error message.
std::string injection_choices(std::initializer_list<Injection::Kind> allowed);

}  // namespace ctwin::live
