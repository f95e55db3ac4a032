// Fakes for the orchestrator core: timers driven by a FakeClock, and a worker link that records
// what the orchestrator sent.
#ifndef AMT_TESTS_UNIT_CORE_FAKES_H_
#define AMT_TESTS_UNIT_CORE_FAKES_H_

#include <functional>
#include <map>
#include <vector>

#include "common/clock.h"
#include "orchestrator/core/orchestrator.h"

namespace amt::core {

// Timers that fire when the test advances the clock with AdvanceTo/Advance.
class FakeTimers final : public Timers {
 public:
  explicit FakeTimers(FakeClock& clock) : clock_(clock) {}
  uint64_t At(double when, std::function<void()> fn) override {
    timers_.emplace(next_, Entry{when, std::move(fn)});
    return next_++;
  }
  void Cancel(uint64_t id) override { timers_.erase(id); }
  // Moves the clock forward by `seconds`, firing due timers in time order.
  void Advance(double seconds) {
    const double target = clock_.Now() + seconds;
    while (true) {
      auto due = timers_.end();
      for (auto it = timers_.begin(); it != timers_.end(); ++it) {
        if (it->second.when <= target &&
            (due == timers_.end() || it->second.when < due->second.when)) {
          due = it;
        }
      }
      if (due == timers_.end()) break;
      clock_.Set(std::max(clock_.Now(), due->second.when));
      auto fn = std::move(due->second.fn);
      timers_.erase(due);
      fn();
    }
    clock_.Set(target);
  }
  size_t pending() const { return timers_.size(); }

 private:
  struct Entry {
    double when;
    std::function<void()> fn;
  };
  FakeClock& clock_;
  uint64_t next_ = 1;
  std::map<uint64_t, Entry> timers_;
};

class FakeWorkerLink final : public WorkerLink {
 public:
  void Send(const v1::OrchestratorMessage& message) override {
    if (on_send) on_send(message);
    sent.push_back(message);
  }
  void Drop() override { ++drops; }
  void ExpectLogs(const std::string& training_job_name,
                  const metrics::MetricParser& parser) override {
    expected.push_back({training_job_name, parser, sent.size()});
  }
  bool Provisional() const override { return provisional; }
  bool SameMachine() const override { return same_machine; }
  std::vector<v1::StartJob> Starts() const {
    std::vector<v1::StartJob> out;
    for (const auto& m : sent) {
      if (m.has_start()) out.push_back(m.start());
    }
    return out;
  }
  std::vector<v1::StopJob> Stops() const {
    std::vector<v1::StopJob> out;
    for (const auto& m : sent) {
      if (m.has_stop()) out.push_back(m.stop());
    }
    return out;
  }
  // An ExpectLogs call: the job, its parser, and how many messages had been sent before it.
  struct Expected {
    std::string training_job_name;
    metrics::MetricParser parser;
    size_t sent_before;
  };
  std::vector<v1::OrchestratorMessage> sent;
  std::vector<Expected> expected;
  std::function<void(const v1::OrchestratorMessage&)> on_send;  // runs at each Send when set
  int drops = 0;                                                // Drop() calls
  bool provisional = false;                                     // a provisioner's stand-in link
  bool same_machine = false;                                    // WorkerLink::SameMachine
};

}  // namespace amt::core

#endif  // AMT_TESTS_UNIT_CORE_FAKES_H_
