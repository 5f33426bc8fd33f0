// The streamed M-steps (model/analysis/steps_stream.hpp): the public class, over its Impl
// (model/analysis/steps_stream_impl.hpp).
#include "model/analysis/steps_stream.hpp"

#include <memory>

#include "model/analysis/steps_stream_impl.hpp"

namespace mstep::model {

StepStream::StepStream(std::span<const RankTrace* const> metas, const Timeline& timeline, const BspParams* params,
                       std::span<const MachineCharge> charges, std::size_t keep_rows)
    : impl_(std::make_unique<Impl>(metas, timeline, params, charges, keep_rows)) {}
StepStream::~StepStream() = default;
RecordTag StepStream::record(std::int32_t rank, std::uint32_t index, const Event& e) {
  return impl_->record(rank, index, e);
}
void StepStream::message(const StreamedMessage& m) { impl_->message(m); }
void StepStream::unmatched(std::int32_t rank, RecordTag tag) { impl_->unmatched(rank, tag); }
void StepStream::collective(std::span<const StreamedMember> members) { impl_->collective(members); }
void StepStream::rank_end(std::int32_t rank, std::uint64_t records) { impl_->rank_end(rank, records); }
StreamedSteps StepStream::finish() { return impl_->finish(); }

}  // namespace mstep::model
