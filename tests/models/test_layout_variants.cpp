// The plausible values of the layout fields a published run leaves out: which apply, which the
// layout check or memory refuses, and that orders placing ranks alike count once.
#include <catch2/catch.hpp>

#include <algorithm>

#include "models/layout_variants.hpp"
#include "support/step_fixtures.hpp"

using namespace ctwin;

namespace {

//! Llama 3 405B on TP 8 x PP 16 (one layer fewer on the first and last stages), DP 2.
Workload llama405b() {
  Workload w = test::llama405b();
  w.layout.stage_layers.assign(16, 8);
  w.layout.stage_layers.front() = w.layout.stage_layers.back() = 7;
  w.layout.sequence_parallel = true;
  return w;
}

const LayoutField* field(const std::vector<LayoutField>& fields, const std::string& name) {
  for (const LayoutField& f : fields)
    if (f.name == name) return &f;
  return nullptr;
}

std::vector<std::string> values(const LayoutField& f, bool runnable_only = false) {
  std::vector<std::string> out;
  for (const LayoutVariant& v : f.variants)
    if (!runnable_only || v.excluded.empty()) out.push_back(v.value);
  return out;
}

}  // namespace

TEST_CASE("layout variants: the fields that apply, each with the value as given among its values", "[step][sensitivity]") {
  const Workload w = llama405b();
  const std::vector<LayoutField> fields = plausible_layouts(w, 8, 0);
  std::vector<std::string> names;
  for (const LayoutField& f : fields) names.push_back(f.name);
  // No CP algorithm without CP; no embedding/loss split when the stage sizes are stated.
  CHECK(names == std::vector<std::string>{"rank_order", "sequence_parallel", "virtual_stages", "schedule", "recompute", "activation_offload",
                                          "micro_batch"});
  for (const LayoutField& f : fields) {
    INFO(f.name);
    const std::vector<std::string> all = values(f);
    CHECK(std::count(all.begin(), all.end(), f.base_value) == 1);
    for (const LayoutVariant& v : f.variants) {
      INFO(v.value);
      CHECK(v.excluded.empty());  // no memory limit given: every layout the check takes runs
    }
  }
  // CP 1: where cp sits changes nothing, so two orders place ranks differently (dp or pp outer).
  CHECK(values(*field(fields, "rank_order")) == std::vector<std::string>{"tp-cp-dp-pp", "tp-cp-pp-dp"});
  // Stated stages of 7 and 8 layers: chunks of at least one layer, so up to 7 virtual stages.
  CHECK(values(*field(fields, "virtual_stages")) == std::vector<std::string>{"1", "2", "3", "4", "5", "6", "7"});
  // 32 sequences on 2 replicas: micro-batches dividing 16, up to 16.
  CHECK(values(*field(fields, "micro_batch")) == std::vector<std::string>{"1", "2", "4", "8", "16"});
  CHECK(field(fields, "virtual_stages")->same_collectives);
  CHECK_FALSE(field(fields, "micro_batch")->same_collectives);
  // Interleaving always fits without a memory limit: the flexible schedule is not offered.
  CHECK(values(*field(fields, "schedule")) == std::vector<std::string>{"1f1b", "zb_h1", "zb_v", "dualpipe"});
  CHECK(values(*field(fields, "recompute")) == std::vector<std::string>{"none", "selective", "full"});
  CHECK(values(*field(fields, "activation_offload")) == std::vector<std::string>{"0", "0.5", "1"});
}

TEST_CASE("layout variants: an H100's memory refuses what does not fit, with the reason", "[step][sensitivity]") {
  Workload w = llama405b();
  w.layout.dp = 128;  // Llama 3's 16,384 GPUs: the optimizer states sharded 128 ways
  w.layout.global_batch = 2048;
  const std::vector<LayoutField> fields = plausible_layouts(w, 8, 80.0 * (1 << 30));
  const LayoutField& sp = *field(fields, "sequence_parallel");
  REQUIRE(values(sp) == std::vector<std::string>{"false", "true"});
  CHECK(sp.variants[0].excluded.find("does not fit in GPU memory") != std::string::npos);
  CHECK(sp.variants[1].excluded.empty());
  // 16 micro-batches on 16 stages: interleaving's warm-up would hold more than all of them, so it
  // holds all 16 (1F1B's stage 1 holds 15), and every count of chunks fits.
  CHECK(values(*field(fields, "virtual_stages"), true) == std::vector<std::string>{"1", "2", "3", "4", "5", "6", "7"});
  // 32 micro-batches: interleaving's warm-up holds 22.5 of them on stage 1 and none of 2..7 fits;
  // the flexible schedule does, with fewer contiguous micro-batches; DualPipe's two copies do not.
  w.layout.global_batch = 4096;
  const std::vector<LayoutField> more = plausible_layouts(w, 8, 80.0 * (1 << 30));
  CHECK(values(*field(more, "virtual_stages"), true) == std::vector<std::string>{"1"});
  const std::vector<std::string> schedules = values(*field(more, "schedule"), true);
  CHECK(std::count(schedules.begin(), schedules.end(), "zb_v") == 1);
  CHECK(std::count(schedules.begin(), schedules.end(), "dualpipe") == 0);
  CHECK(std::count_if(schedules.begin(), schedules.end(), [](const std::string& v) { return v.rfind("flexible_interleaved, virtual_stages 2,", 0) == 0; }) == 1);
}

TEST_CASE("layout variants: an even split offers the embedding/loss split, and CP its algorithm", "[step][sensitivity]") {
  Workload w = llama405b();
  w.layout.stage_layers.clear();
  w.layout.embedding_as_layer = w.layout.loss_as_layer = true;  // 126 + 2 = 16 x 8
  w.layout.cp = 2;
  w.layout.dp = 1;
  w.layout.global_batch = 16;
  const std::vector<LayoutField> fields = plausible_layouts(w, 8, 0);
  const LayoutField* split = field(fields, "embedding_loss_split");
  REQUIRE(split);
  CHECK(split->base_value == "both");
  CHECK(split->pointers == std::vector<std::string>{"/workload/parallel/embedding_as_layer", "/workload/parallel/loss_as_layer"});
  CHECK(values(*split, true) == std::vector<std::string>{"both"});  // 126 or 127 units do not split over 16
  // Evenly split 8-unit stages: virtual stages dividing 8.
  CHECK(values(*field(fields, "virtual_stages")) == std::vector<std::string>{"1", "2", "4", "8"});
  const LayoutField* cp = field(fields, "cp_algorithm");
  REQUIRE(cp);
  CHECK(values(*cp) == std::vector<std::string>{"ring", "all_gather"});
  CHECK(cp->same_collectives);
  // CP 2 and DP 1: cp and pp are split, so where the (degree 1) data dimension sits does not matter.
  CHECK(values(*field(fields, "rank_order")) == std::vector<std::string>{"tp-cp-dp-pp", "tp-dp-pp-cp"});
}
