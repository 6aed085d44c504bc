#pragma once
//! The SimGrid engine of one process. Only files under sim/simgrid include SimGrid headers (they
//! take seconds to compile); each simulation builds the slice of the platform its question needs
//! (transfer_fabric.cpp, comm_fabric.cpp).

namespace ctwin {

//! Creates this process's engine, with the network model set so a flow takes size/bandwidth +
//! latency (SimGrid 3.32's default model runs about 8.5% slow and caps flows on long routes).
//! Call once per process, in a child (subprocess.hpp).
//!
//! Actor stacks: with `many_actors` (collective phases, up to 100k actors) they have no guard
//! page, which SimGrid then allocates zeroed (calloc: every page of every stack written). A few
//! actors (a transfer's slice) get guard pages instead: their stacks are allocated unzeroed and
//! only the pages a stack reaches are touched (in a forked child each page written is a fault:
//! 64 zeroed stacks of 256 KiB made a cold 1,000-trial SimGrid run of the 16k scenario 3x slower).
void init_simgrid_engine(bool many_actors = true);

}  // namespace ctwin
