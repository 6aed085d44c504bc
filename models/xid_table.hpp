#pragma once
//! NVIDIA's Xid codes as ctwin reads them: one table for the fault catalogue, calibration and live
//! mode. For each code: what it does to a training job, NVIDIA's immediate action in ctwin's
//! vocabulary, ctwin's catalogue class for it when there is one, and the Xid it accompanies (a row
//! remap, Xid 63, reported right after a double-bit error, Xid 48, on the same GPU is part of that
//! fault, not a second one). Source: NVIDIA, "Analyzing Xid Errors with the Xid Catalog"
//! (scenarios/sources/nvidia_xid_actions.csv).

#include <span>
#include <string>

#include "models/remediation.hpp"
#include "models/scenario.hpp"

namespace ctwin {

struct XidInfo {
  int xid = 0;
  const char* what = "";                   //!< NVIDIA's description
  Effect effect = Effect::Crash;           //!< Crash: the application dies; None: informational, counted
  Act action = Act::Restart;               //!< NVIDIA's immediate action: None (ignore), Restart (the application), ResetGpu, Reboot
  const char* catalog_class = nullptr;     //!< the built-in catalogue's class for this Xid, if any
  int follows = -1;                        //!< the Xid this one accompanies, reported just after it on the same GPU
};

//! Every Xid in the table, by code.
std::span<const XidInfo> xid_table();
//! Null for a code the table does not have.
const XidInfo* xid_info(int xid);
//! The class an Xid counts as when no scenario class holds it: the catalogue's class the table
//! names, else "xid_<code>". The live side and calibration name it alike, so they compare.
std::string xid_class_name(int xid);

}  // namespace ctwin
