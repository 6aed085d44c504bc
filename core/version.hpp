#pragma once
//! ctwin's version: what `--version` says, and `ctwin_version` in every JSON report beside its
//! `schema_version`. The top-level CMakeLists.txt refuses to configure when project(VERSION)
//! says otherwise.

namespace ctwin {

inline constexpr const char* kCtwinVersion = "0.1";

}  // namespace ctwin
