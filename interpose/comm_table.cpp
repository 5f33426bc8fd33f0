#include "interpose/comm_table.hpp"

#include <algorithm>

namespace mstep {

void CommTable::init(int world_rank, int world_size) {
  infos_.clear();
  handles_ = FlatHandleMap<const CommInfo*>{64};
  written_ = 0;
  auto world = std::make_unique<CommInfo>();
  world->id = 0;
  world->size = world_size;
  world->world.resize(static_cast<std::size_t>(world_size));
  for (int r = 0; r < world_size; ++r) world->world[static_cast<std::size_t>(r)] = r;
  infos_.push_back(std::move(world));
  (void)world_rank;
}

const CommInfo& CommTable::lookup(MPI_Comm comm) {
  if (const CommInfo** found = handles_.find(static_cast<int>(comm))) return **found;
  auto info = std::make_unique<CommInfo>();
  info->id = next_id();
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  MPI_Group group = MPI_GROUP_NULL, world_group = MPI_GROUP_NULL;
  if (inter) {
    PMPI_Comm_remote_group(comm, &group);
  } else {
    PMPI_Comm_group(comm, &group);
  }
  PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
  int size = 0;
  PMPI_Group_size(group, &size);
  std::vector<int> local(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) local[static_cast<std::size_t>(r)] = r;
  std::vector<int> in_world(static_cast<std::size_t>(size), MPI_UNDEFINED);
  // Members outside MPI_COMM_WORLD (dynamic processes) stay MPI_UNDEFINED -> kNoPeer.
  PMPI_Group_translate_ranks(group, size, local.data(), world_group, in_world.data());
  PMPI_Group_free(&group);
  PMPI_Group_free(&world_group);
  info->size = size;
  info->inter = inter != 0;
  info->world.reserve(in_world.size());
  for (int w : in_world) info->world.push_back(w == MPI_UNDEFINED ? kNoPeer : w);
  CommInfo* raw = info.get();
  infos_.push_back(std::move(info));
  handles_.insert(static_cast<int>(comm), raw);
  return *raw;
}

const CommInfo& CommTable::add_copy(const CommInfo& parent) {
  auto info = std::make_unique<CommInfo>(parent);
  info->id = next_id();
  infos_.push_back(std::move(info));
  return *infos_.back();
}

std::vector<CommDef> CommTable::take_new() {
  std::vector<CommDef> out;
  for (; written_ < infos_.size(); ++written_) {
    const CommInfo& c = *infos_[written_];
    out.push_back(CommDef{c.id, c.inter, c.world});
  }
  return out;
}

}  // namespace mstep
