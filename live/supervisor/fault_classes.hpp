#pragma once
//! Names what interrupted a live run with the fault classes the simulator uses, so that `ctwin
//! validate` counts interruptions by the same classes: an Xid is the scenario's class with that
//! Xid, else the built-in catalogue's (models/fault_catalog), else "xid<N>" (restart). A crash
//! with no hardware signal is `software_bug`, a hang `nccl_hang`, a NaN loss `sdc`: the
//! catalogue's classes for them, with their remediation.

#include <string>

#include "models/scenario.hpp"
#include "policies/controller.hpp"

namespace ctwin::live {

struct LiveFaultClass {
  std::string name;
  Act act = Act::Restart;  //!< the class's remediation (Wait: it stops nothing)
};

LiveFaultClass classify_xid(const Scenario& scenario, int xid);
//! A class by name (scenario first, then catalogue); restart when neither knows it.
LiveFaultClass classify_named(const Scenario& scenario, const std::string& name);

}  // namespace ctwin::live
