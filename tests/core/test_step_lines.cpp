// Step lines as trainers print them: Megatron-LM's iteration lines and tqdm's progress bars (the
// HF Trainer's and PyTorch Lightning's), which passive supervision and calibration read.
#include <catch2/catch.hpp>

#include "core/step_lines.hpp"

using namespace ctwin;

TEST_CASE("Megatron-LM iteration lines: the step and its elapsed time", "[core][steps]") {
  const auto m = parse_step_line(
      " [2026-03-02 09:23:40] iteration      120/  500000 | consumed samples:  61440 | elapsed time per iteration (ms): "
      "1234.5 | learning rate: 7.5E-06 |");
  REQUIRE(m);
  CHECK(m->step == 120);
  CHECK(m->seconds == Approx(1.2345));
  const auto nan = parse_megatron_line(" iteration 50/ 500 | elapsed time per iteration (ms): nan |");
  REQUIRE(nan);
  CHECK(nan->elapsed_said);
  CHECK(nan->seconds < 0);
  CHECK_FALSE(parse_megatron_line(" iteration 99999999999999999999/ 100 | elapsed time per iteration (ms): 1.0 |"));
  CHECK_FALSE(parse_step_line("the iteration began"));
}

TEST_CASE("tqdm progress bars: the count and the rate, either way round", "[core][steps]") {
  const auto rate = parse_step_line(" 12%|#2        | 120/1000 [02:00<14:40,  1.25it/s, loss=2.1]");
  REQUIRE(rate);
  CHECK(rate->step == 120);
  CHECK(rate->seconds == Approx(0.8));
  const auto slow = parse_step_line("Epoch 0:  40%|####      | 8/20 [00:20<00:30,  2.50s/it, v_num=0]");
  REQUIRE(slow);
  CHECK(slow->step == 8);
  CHECK(slow->seconds == Approx(2.5));
  const auto start = parse_step_line("  0%|          | 0/1000 [00:00<?, ?it/s]");
  REQUIRE(start);
  CHECK(start->step == 0);
  CHECK(start->seconds < 0);
  CHECK_FALSE(parse_step_line("downloading 3/4 files"));
  CHECK_FALSE(parse_step_line("loss 2.1 [ok]"));
}
