//! The flow model: transfers share bandwidth, event-driven.
//!
//! A flow is the data of one request (a read's response, a write's payload) crossing a set
//! of resources (NIU ports, links, a DRAM channel) at a rate. Rates are the max-min fair
//! allocation (progressive filling): every active flow's rate rises together until a
//! resource it uses is full or it reaches its own cap, so `n` flows on one link get a
//! `1/n` share each and a flow limited elsewhere leaves its unused share to the others.
//! Rates are recomputed whenever a flow starts or ends; between those events every flow
//! progresses linearly. Flows from one initiator to one target on one NoC travel on the
//! same virtual channel and queue behind each other (first in, first out) instead of
//! interleaving; flows to different targets interleave.
//!
//! Everything is in `f64` cycles and bytes, computed in a fixed order on one thread, so
//! the result does not depend on how the tiles are spread over host threads.

use std::collections::{BTreeMap, HashMap, VecDeque};

/// Opaque id of a flow (the order flows were submitted in).
pub(crate) type FlowId = u64;

/// A flow to simulate.
#[derive(Debug)]
pub(crate) struct FlowSpec {
    /// Cycle the first byte may move.
    pub start: f64,
    /// Bytes on the wire (payload plus one header flit a packet).
    pub bytes: f64,
    /// Resources crossed (deduplicated).
    pub resources: Vec<u32>,
    /// Highest rate the flow can reach on its own, bytes/cycle.
    pub cap: f64,
    /// Flows with the same key are served one after the other.
    pub queue: u64,
}

#[derive(Debug)]
struct Active {
    id: FlowId,
    remaining: f64,
    rate: f64,
    resources: Vec<u32>,
    cap: f64,
    queue: u64,
}

/// The flows of one chip.
#[derive(Debug)]
pub(crate) struct Flows {
    capacity: Vec<f64>,
    /// Simulated up to this cycle.
    pub now: f64,
    /// Not started yet: by (start, id).
    waiting: BTreeMap<(u64, FlowId), FlowSpec>,
    /// Started but queued behind an earlier flow of the same key.
    queued: HashMap<u64, VecDeque<(FlowId, FlowSpec)>>,
    active: Vec<Active>,
    dirty: bool,
    /// Scratch of [`Flows::allocate`], indexed by resource.
    left: Vec<f64>,
    users: Vec<u32>,
    touched: Vec<u32>,
}

const EPS: f64 = 1e-6;

impl Flows {
    pub fn new(capacity: Vec<f64>) -> Flows {
        let n = capacity.len();
        Flows {
            capacity,
            now: 0.0,
            waiting: BTreeMap::new(),
            queued: HashMap::new(),
            active: Vec::new(),
            dirty: false,
            left: vec![0.0; n],
            users: vec![0; n],
            touched: Vec::new(),
        }
    }

    pub fn is_idle(&self) -> bool {
        self.waiting.is_empty() && self.active.is_empty() && self.queued.values().all(VecDeque::is_empty)
    }

    /// Adds a flow. Its start must not lie before `now` (it is moved up if it does).
    pub fn submit(&mut self, id: FlowId, mut spec: FlowSpec) {
        spec.start = spec.start.max(self.now);
        // Key by the start's bit pattern (non-negative floats order like their bits).
        self.waiting.insert((spec.start.to_bits(), id), spec);
    }

    /// Simulates up to cycle `until`; returns the flows that finished, with the cycle
    /// their last byte left the bottleneck, in completion order.
    pub fn advance(&mut self, until: f64, done: &mut Vec<(FlowId, f64)>) {
        loop {
            // Start every flow whose start has come.
            while let Some((&(bits, _), _)) = self.waiting.first_key_value() {
                if f64::from_bits(bits) > self.now + EPS {
                    break;
                }
                let ((_, id), spec) = self.waiting.pop_first().expect("non-empty");
                if self.active.iter().any(|a| a.queue == spec.queue) {
                    self.queued.entry(spec.queue).or_default().push_back((id, spec));
                } else {
                    self.activate(id, spec);
                }
            }
            if self.dirty {
                self.allocate();
            }
            let next_start = self.waiting.first_key_value().map_or(f64::INFINITY, |(&(b, _), _)| f64::from_bits(b));
            let next_end = self
                .active
                .iter()
                .map(|a| if a.rate > 0.0 { self.now + a.remaining / a.rate } else { f64::INFINITY })
                .fold(f64::INFINITY, f64::min);
            let next = next_start.min(next_end);
            if next > until || next == f64::INFINITY {
                let to = until.max(self.now);
                if to.is_finite() {
                    self.progress(to);
                }
                return;
            }
            self.progress(next);
            // Finish flows (in id order for a stable output), then start queued successors.
            let mut finished: Vec<usize> =
                (0..self.active.len()).filter(|&i| self.active[i].remaining <= EPS * (1.0 + self.active[i].rate)).collect();
            if finished.is_empty() && next_end <= next_start {
                // Rounding left a sliver: finish the flow closest to done.
                if let Some(i) = (0..self.active.len()).min_by(|&a, &b| {
                    let ta = self.active[a].remaining / self.active[a].rate.max(EPS);
                    let tb = self.active[b].remaining / self.active[b].rate.max(EPS);
                    ta.total_cmp(&tb)
                }) {
                    finished.push(i);
                }
            }
            let mut keys = Vec::new();
            let mut removed: Vec<Active> = Vec::new();
            finished.sort_unstable_by(|a, b| b.cmp(a));
            for i in finished {
                removed.push(self.active.swap_remove(i));
            }
            self.active.sort_by_key(|a| a.id);
            removed.sort_by_key(|a| a.id);
            for a in removed {
                done.push((a.id, self.now));
                keys.push(a.queue);
            }
            for k in keys {
                let next = self.queued.get_mut(&k).and_then(VecDeque::pop_front);
                if self.queued.get(&k).is_some_and(VecDeque::is_empty) {
                    self.queued.remove(&k);
                }
                if let Some((id, spec)) = next {
                    self.activate(id, spec);
                }
            }
            self.dirty = true;
        }
    }

    fn activate(&mut self, id: FlowId, spec: FlowSpec) {
        self.active.push(Active {
            id,
            remaining: spec.bytes.max(0.0),
            rate: 0.0,
            resources: spec.resources,
            cap: spec.cap,
            queue: spec.queue,
        });
        self.active.sort_by_key(|a| a.id);
        self.dirty = true;
    }

    fn progress(&mut self, to: f64) {
        let dt = to - self.now;
        if dt > 0.0 {
            for a in &mut self.active {
                a.remaining = (a.remaining - a.rate * dt).max(0.0);
            }
        }
        self.now = to;
    }

    /// Max-min fair rates by progressive filling (dense scratch arrays: this runs at every
    /// flow start and end).
    fn allocate(&mut self) {
        self.dirty = false;
        let n = self.active.len();
        if n == 0 {
            return;
        }
        let (left, users, touched) = (&mut self.left, &mut self.users, &mut self.touched);
        touched.clear();
        for a in &self.active {
            for &r in &a.resources {
                let r = r as usize;
                if users[r] == 0 {
                    left[r] = self.capacity[r];
                    touched.push(r as u32);
                }
                users[r] += 1;
            }
        }
        let mut frozen = vec![false; n];
        let mut level = 0.0f64;
        let mut remaining = n;
        while remaining > 0 {
            let mut delta = f64::INFINITY;
            for &r in touched.iter() {
                let u = users[r as usize];
                if u > 0 {
                    delta = delta.min(left[r as usize] / u as f64);
                }
            }
            for (i, a) in self.active.iter().enumerate() {
                if !frozen[i] {
                    delta = delta.min(a.cap - level);
                }
            }
            let delta = delta.max(0.0);
            level += delta;
            for &r in touched.iter() {
                left[r as usize] -= delta * users[r as usize] as f64;
            }
            let mut progressed = false;
            for i in 0..n {
                if frozen[i] {
                    continue;
                }
                let a = &self.active[i];
                let full = a.resources.iter().any(|&r| left[r as usize] <= EPS * self.capacity[r as usize].max(1.0));
                if full || a.cap - level <= EPS {
                    frozen[i] = true;
                    remaining -= 1;
                    progressed = true;
                    self.active[i].rate = level;
                    for &r in &self.active[i].resources {
                        users[r as usize] -= 1;
                    }
                }
            }
            if !progressed {
                // Numerically stuck: give everyone what they have.
                for i in 0..n {
                    if !frozen[i] {
                        self.active[i].rate = level;
                        for &r in &self.active[i].resources {
                            users[r as usize] -= 1;
                        }
                    }
                }
                break;
            }
        }
        for &r in touched.iter() {
            users[r as usize] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(start: f64, bytes: f64, resources: Vec<u32>, queue: u64) -> FlowSpec {
        FlowSpec { start, bytes, resources, cap: 32.0, queue }
    }

    fn run(f: &mut Flows) -> Vec<(FlowId, f64)> {
        let mut done = Vec::new();
        f.advance(f64::INFINITY, &mut done);
        done
    }

    #[test]
    fn one_flow_runs_at_its_bottleneck() {
        let mut f = Flows::new(vec![32.0, 16.0]);
        f.submit(1, spec(10.0, 1600.0, vec![0, 1], 0));
        assert_eq!(run(&mut f), vec![(1, 110.0)]);
        assert!(f.is_idle());
    }

    #[test]
    fn flows_sharing_a_link_split_it_and_the_survivor_speeds_up() {
        let mut f = Flows::new(vec![32.0, 32.0, 32.0]);
        f.submit(1, spec(0.0, 3200.0, vec![0, 1], 1));
        f.submit(2, spec(0.0, 1600.0, vec![0, 2], 2));
        // Both at 16 B/cycle until flow 2 ends at 100; flow 1 has 1600 left at 32.
        assert_eq!(run(&mut f), vec![(2, 100.0), (1, 150.0)]);
    }

    #[test]
    fn max_min_gives_unused_share_to_others() {
        // Flow 1 is capped at 8 by resource 1; flow 2 gets the other 24 of resource 0.
        let mut f = Flows::new(vec![32.0, 8.0, 64.0]);
        f.submit(1, spec(0.0, 800.0, vec![0, 1], 1));
        f.submit(2, spec(0.0, 2400.0, vec![0, 2], 2));
        assert_eq!(run(&mut f), vec![(1, 100.0), (2, 100.0)]);
    }

    #[test]
    fn same_queue_is_first_in_first_out() {
        let mut f = Flows::new(vec![32.0]);
        f.submit(1, spec(0.0, 320.0, vec![0], 7));
        f.submit(2, spec(0.0, 320.0, vec![0], 7));
        assert_eq!(run(&mut f), vec![(1, 10.0), (2, 20.0)]);
    }

    #[test]
    fn advancing_in_steps_gives_the_same_result() {
        let mk = || {
            let mut f = Flows::new(vec![32.0, 24.0, 50.0]);
            f.submit(1, spec(3.0, 5000.0, vec![0, 1], 1));
            f.submit(2, spec(17.0, 700.0, vec![0, 2], 2));
            f.submit(3, spec(40.0, 9000.0, vec![1, 2], 3));
            f
        };
        let whole = run(&mut mk());
        let mut f = mk();
        let mut done = Vec::new();
        let mut t = 0.0;
        while !f.is_idle() {
            t += 32.0;
            f.advance(t, &mut done);
        }
        assert_eq!(whole.len(), 3);
        for (a, b) in whole.iter().zip(&done) {
            assert_eq!(a.0, b.0);
            assert!((a.1 - b.1).abs() < 1e-6, "{a:?} {b:?}");
        }
    }
}
