#pragma once
//! Training steps as trainers print them, for calibration's step logs and for supervising a
//! trainer that was not changed for ctwin (`ctwin live run --passive`):
//!   Megatron-LM:  " iteration      120/  500000 | ... | elapsed time per iteration (ms): 1234.5 | ..."
//!   tqdm (HF Trainer, PyTorch Lightning):  " 12%|#2  | 120/1000 [02:00<14:40, 1.00it/s, loss=2.1]"
//!                                       or "120/1000 [02:00<14:40,  2.50s/it]"
//! Parsed by hand (a std::regex over a 50 KB line once overflowed the stack).

#include <optional>
#include <string_view>

namespace ctwin {

struct StepLine {
  long long step = 0;    //!< the iteration the line reports (the count done, for a progress bar)
  double seconds = -1;   //!< its duration, or the bar's current seconds per step; -1 when not said
  bool elapsed_said = false;  //!< Megatron: the line has the elapsed field, which may not be a number
};

//! A Megatron-LM iteration line (the elapsed time may be absent or unreadable: `seconds` -1).
std::optional<StepLine> parse_megatron_line(std::string_view line);
//! A tqdm progress bar's "N/M [..., X it/s]" or "X s/it".
std::optional<StepLine> parse_progress_line(std::string_view line);
//! Either of the above.
std::optional<StepLine> parse_step_line(std::string_view line);

}  // namespace ctwin
