#pragma once
//! The SimGrid engine of one process. Only files under sim/simgrid include SimGrid headers (they
//! take seconds to compile); each simulation builds the slice of the platform its question needs
//! (transfer_fabric.cpp, comm_fabric.cpp).

namespace ctwin {

//! Creates this process's engine, with the network model set so a flow takes size/bandwidth +
//! latency (SimGrid 3.32's default model runs about 8.5% slow and caps flows on long routes).
//! Call once per process, in a child (subprocess.hpp).
void init_simgrid_engine();

}  // namespace ctwin
