#pragma once
//! What is wrong with a scenario (or any JSON input the models read): each problem at its JSON
//! pointer, all of them together in one error. The readers below the scenario loader (json_reader,
//! json_document) collect and throw these without knowing the scenario.

#include <string>
#include <vector>

#include "core/errors.hpp"

namespace ctwin {

struct ScenarioProblem {
  std::string pointer;  //!< JSON pointer to the offending field ("" is the whole document)
  std::string reason;
};

//! Thrown with every problem found; `what()` is the lines `FILE: /pointer: reason`.
class ScenarioInvalid : public BadInput {
 public:
  ScenarioInvalid(std::string file, std::vector<ScenarioProblem> problems);
  const std::string& file() const { return file_; }
  const std::vector<ScenarioProblem>& problems() const { return problems_; }

 private:
  std::string file_;
  std::vector<ScenarioProblem> problems_;
};

}  // namespace ctwin
