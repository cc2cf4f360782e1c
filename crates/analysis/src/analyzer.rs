//! The analysis as a stream ([`Analyzer`], and [`analyze`]/[`analyze_with`] for a reader):
//! takes the trace's records in file order, keeps the tables, the trace's facts and the
//! statistics, queues each thread's events in the reorder queue and has the replay take them
//! in time order; [`Analyzer::finish`] closes what is still open and returns the [`Analysis`].
//!
//! ```text
//! INFO      runtime 10.0, ns_per_tick 1    the tables; whether suspensions report a Leave
//! FUNCTION  #2 Ns.T.L3 (ASYNC_VARIANT)     the function table and the function's role
//! EVENTS    T1 [t=100 enter #2, …]         the reorder queue, replayed in time order
//! END       shutdown                       finish(): frames open at the end, the Analysis
//! ```

use std::collections::HashSet;
use std::io::Read;

use std::sync::mpsc;

use eltrace_trace::{EndRecord, Event, ReadError, Record, ThreadIdx, TraceReader};

use crate::analysis::Analysis;
use crate::model::Tables;
use crate::reorder::Reorder;
use crate::replay::Replay;
use crate::sampled::Sampler;
use crate::sink::{AnalysisError, FrameSink, NullSink};
use crate::stats::Stats;

/// What to analyse and what to build.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Analyse only the threads with these OS tids (`None`: every thread).
    pub threads: Option<Vec<u64>>,
    /// Build the [`CallTree`](crate::CallTree) (needed for folded stacks; costs a hash lookup
    /// per call).
    pub call_tree: bool,
    /// Build the logical call tree ([`Analysis::logical_tree`](crate::Analysis)).
    pub logical_tree: bool,
}

/// Diagnostics kept at most; more are counted in the last message.
const MAX_DIAGNOSTICS: usize = 1000;

/// A streaming analysis: feed it records with [`Analyzer::record`], then call
/// [`Analyzer::finish`]. [`analyze_with`] does this for a reader.
pub struct Analyzer {
    tables: Tables,
    stats: Stats,
    replay: Replay,
    reorder: Reorder,
    filter: Option<HashSet<u64>>,
    /// Ticks into ns, each thread's times never decreasing.
    clock: Clock,
    end: Option<EndRecord>,
    diagnostics: Vec<String>,
    extra_diagnostics: u64,
    seen_events: bool,
    /// The sampled-time estimator (timing `sampled` only).
    sampler: Option<Sampler>,
}

impl Analyzer {
    pub fn new(opts: &Options) -> Self {
        Analyzer {
            tables: Tables::default(),
            stats: Stats::new(opts.call_tree, opts.logical_tree),
            replay: Replay::default(),
            reorder: Reorder::default(),
            filter: opts.threads.as_ref().map(|t| t.iter().copied().collect()),
            clock: Clock::default(),
            end: None,
            diagnostics: Vec::new(),
            extra_diagnostics: 0,
            seen_events: false,
            sampler: None,
        }
    }

    /// Sends every event through the full rules (tests: the quick path gives the same
    /// results).
    #[cfg(test)]
    pub(crate) fn without_quick_path(mut self) -> Self {
        self.replay.no_quick_path = true;
        self
    }

    /// Replays every thread in time order, none ahead of the others (tests: the results are
    /// the same).
    #[cfg(test)]
    pub(crate) fn without_run_ahead(mut self) -> Self {
        self.replay.no_run_ahead = true;
        self
    }

    /// The tables read so far.
    pub fn tables(&self) -> &Tables {
        &self.tables
    }

    fn selected(&self, thread: ThreadIdx) -> bool {
        match &self.filter {
            None => true,
            Some(set) => self
                .tables
                .threads
                .os_tid(thread)
                .is_some_and(|t| set.contains(&t)),
        }
    }

    fn to_ns(&self, ticks: u64) -> u64 {
        self.clock.to_ns(ticks)
    }

    /// Capacity (in events) of all the threads' reorder queues, and how many threads are
    /// waiting to be analysed (tests: memory stays bounded by what is queued).
    #[cfg(test)]
    pub(crate) fn queued_capacity(&self) -> (usize, usize) {
        self.reorder.queued_capacity()
    }

    /// Takes one record of the trace, in file order.
    pub fn record<S: FrameSink + ?Sized>(
        &mut self,
        rec: Record,
        sink: &mut S,
    ) -> Result<(), AnalysisError> {
        match rec {
            Record::Info(info) => {
                sink.info(&info).map_err(AnalysisError::Sink)?;
                self.clock.info_read(&info);
                if info.sampling() || info.timing() == eltrace_trace::protocol::timing::SAMPLED {
                    let hz = info.sample_hz().unwrap_or(1000);
                    self.sampler = Some(Sampler::new(hz));
                }
                self.replay.info_read(&info);
                self.tables.info = info;
            }
            Record::Function(f) => {
                self.replay.function_read(&f);
                self.tables.functions.insert(f);
            }
            Record::Thread(t) => self.tables.threads.insert(t),
            Record::Events { thread, mut events } => {
                let span = self.clock.events(thread, &mut events);
                self.events_ns(thread, events, span, sink)?
            }
            Record::Samples(samples) => {
                if self.sampler.is_some() {
                    let kept: Vec<_> = samples
                        .into_iter()
                        .filter(|s| self.selected(s.thread))
                        .collect();
                    if let Some(s) = self.sampler.as_mut() {
                        s.samples(&kept);
                    }
                }
            }
            Record::Dropped { thread, count } => {
                let selected = self.selected(thread);
                if let Some(s) = self.sampler.as_mut().filter(|_| selected) {
                    s.dropped(thread);
                }
                self.stats.dropped(thread, count, selected);
                if selected {
                    self.reorder.push_dropped(thread, count);
                }
            }
            Record::Waits {
                thread,
                waits,
                wait_ns,
            } => {
                let selected = self.selected(thread);
                self.stats.waits(thread, waits, wait_ns, selected);
            }
            Record::End(e) => self.end = Some(e),
            Record::Value(v) => self.tables.values.insert(v.id, v),
            Record::Diagnostic(d) => {
                if self.diagnostics.len() < MAX_DIAGNOSTICS {
                    self.diagnostics.push(d);
                } else {
                    self.extra_diagnostics += 1;
                }
            }
        }
        Ok(())
    }

    /// Takes a chunk of a thread's events, converted by a [`Clock`] (`span`: the chunk's first
    /// and last times before the clamp, `None` for no events), into the reorder queue, then
    /// analyses what is old enough (see [`Reorder`]).
    fn events_ns<S: FrameSink + ?Sized>(
        &mut self,
        thread: ThreadIdx,
        events: Vec<Event>,
        span: Option<(u64, u64)>,
        sink: &mut S,
    ) -> Result<(), AnalysisError> {
        let selected = self.selected(thread);
        if let Some(s) = self.sampler.as_mut().filter(|_| selected) {
            s.events(thread, &events);
        }
        let Some((first, last)) = span else {
            return Ok(());
        };
        let n = events.len() as u64;
        self.stats.chunk_read(n, first, last, !self.seen_events);
        self.seen_events = true;
        if !selected {
            self.reorder.recycle(events);
            return Ok(());
        }
        self.stats.chunk_analysed(thread, n, first);
        let limit = self.reorder.push_events(thread, events, last);
        self.drain(limit, sink)
    }

    /// An emptied event vector that the reader can decode its next chunk into
    /// ([`TraceReader::recycle`]), so that a long trace does not allocate one per chunk.
    pub fn spare_events(&mut self) -> Option<Vec<Event>> {
        self.reorder.spare()
    }

    /// Analyses the queued events up to time `limit`, in time order across threads.
    fn drain<S: FrameSink + ?Sized>(
        &mut self,
        limit: u64,
        sink: &mut S,
    ) -> Result<(), AnalysisError> {
        let (replay, tables, stats) = (&mut self.replay, &mut self.tables, &mut self.stats);
        self.reorder.drain(limit, |thread, batch| {
            replay.run(tables, stats, thread, batch, sink)
        })
    }

    /// Closes the frames still open (at the trace's last timestamp) and returns the result.
    pub fn finish<S: FrameSink + ?Sized>(
        mut self,
        truncated: bool,
        sink: &mut S,
    ) -> Result<Analysis, AnalysisError> {
        self.drain(u64::MAX, sink)?;
        if self.seen_events {
            if let Some(e) = &self.end {
                let end = self.to_ns(e.ts);
                self.stats.totals.last_ns = self.stats.totals.last_ns.max(end);
            }
        }
        let last = self.stats.totals.last_ns;
        self.replay
            .finish(&mut self.tables, &mut self.stats, last, sink)?;
        // Threads with a record but no events are listed too (if selected).
        let idxs: Vec<ThreadIdx> = self.tables.threads.iter().map(|t| t.idx).collect();
        for t in idxs {
            if self.selected(t) {
                self.stats.thread(t);
            }
        }
        if self.extra_diagnostics > 0 {
            self.diagnostics
                .push(format!("… and {} more diagnostics", self.extra_diagnostics));
        }
        let mut analysis =
            self.stats
                .into_analysis(self.tables, self.end, truncated, self.diagnostics);
        analysis.sampled = self.sampler.map(Sampler::finish);
        Ok(analysis)
    }
}

/// Analyses a whole trace.
pub fn analyze<R: Read + Send>(input: R, opts: &Options) -> Result<Analysis, AnalysisError> {
    analyze_with(input, opts, &mut NullSink)
}

/// Analyses a whole trace, handing every frame to `sink` as it closes.
///
/// The trace is read, checked and decoded on a second thread while this one analyses (the
/// records keep their file order, so the result is the same as reading on one thread); the
/// decoded chunks' vectors go back to the reader for reuse.
pub fn analyze_with<R: Read + Send, S: FrameSink + ?Sized>(
    input: R,
    opts: &Options,
    sink: &mut S,
) -> Result<Analysis, AnalysisError> {
    let mut reader = TraceReader::new(input)?;
    let mut an = Analyzer::new(opts);
    let (records, received) = mpsc::sync_channel::<Result<Chunk, ReadError>>(READ_AHEAD);
    let (spares, spare_rx) = mpsc::channel::<Vec<Event>>();
    std::thread::scope(|scope| {
        let read = scope.spawn(move || {
            let mut clock = Clock::default();
            loop {
                while let Ok(v) = spare_rx.try_recv() {
                    reader.recycle(v);
                }
                match reader.next_record() {
                    Ok(Some(rec)) => {
                        if records.send(Ok(clock.convert(rec))).is_err() {
                            break;
                        }
                    }
                    Ok(None) => break,
                    Err(e) => {
                        let _ = records.send(Err(e));
                        break;
                    }
                }
            }
            reader.truncated()
        });
        let mut failed = None;
        for rec in received.iter() {
            let step = rec.map_err(AnalysisError::from).and_then(|rec| match rec {
                Chunk::Record(rec) => an.record(rec, sink),
                Chunk::Events {
                    thread,
                    events,
                    span,
                } => an.events_ns(thread, events, Some(span), sink),
            });
            if let Err(e) = step {
                failed = Some(e);
                break;
            }
            if let Some(v) = an.spare_events() {
                let _ = spares.send(v);
            }
        }
        // Stops the reader if the analysis failed first.
        drop(received);
        let truncated = read.join().unwrap_or(true);
        match failed {
            Some(e) => Err(e),
            None => an.finish(truncated, sink),
        }
    })
}

/// Records decoded ahead of the analysis at most. Deep, because the reader's pace is
/// uneven (a chunk decoded into fresh memory takes its page faults): with 32 the analysis
/// thread waited for it a quarter of the time on the ASP.NET trace (docs/performance.md).
const READ_AHEAD: usize = 512;

/// A record as the reading thread hands it on: EVENTS with their times in ns.
enum Chunk {
    Record(Record),
    /// `span`: the chunk's first and last times in ns before the clamp.
    Events {
        thread: ThreadIdx,
        events: Vec<Event>,
        span: (u64, u64),
    },
}

/// Events' ticks into ns since the trace's start, each thread's times never decreasing (also
/// across chunks). `analyze_with`'s reading thread converts with one of its own while the
/// chunk is still in its core's cache ([`Clock::convert`]); [`Analyzer::record`] with the
/// analyzer's.
#[derive(Default)]
struct Clock {
    info: eltrace_trace::TraceInfo,
    last_ns: crate::fxmap::DenseMap<u64>,
}

impl Clock {
    /// The trace's INFO record was read.
    fn info_read(&mut self, info: &eltrace_trace::TraceInfo) {
        self.info = info.clone();
    }

    fn to_ns(&self, ticks: u64) -> u64 {
        self.info.ns_since_start(ticks)
    }

    /// Turns a chunk of a thread's events' ticks into ns, clamped to the thread's latest time;
    /// returns the chunk's first and last times before the clamp (`None`: no events).
    fn events(&mut self, thread: ThreadIdx, events: &mut [Event]) -> Option<(u64, u64)> {
        let (first, last) = (events.first()?, events.last()?);
        let span = (self.to_ns(first.ts), self.to_ns(last.ts));
        let prev = self.last_ns.entry(thread.0, || 0);
        let mut at = *prev;
        for e in events.iter_mut() {
            at = self.info.ns_since_start(e.ts).max(at);
            e.ts = at;
        }
        *prev = at;
        Some(span)
    }

    /// A record read on the reading thread, its events converted.
    fn convert(&mut self, rec: Record) -> Chunk {
        match rec {
            Record::Events { thread, mut events } => match self.events(thread, &mut events) {
                Some(span) => Chunk::Events {
                    thread,
                    events,
                    span,
                },
                None => Chunk::Record(Record::Events { thread, events }),
            },
            Record::Info(info) => {
                self.info_read(&info);
                Chunk::Record(Record::Info(info))
            }
            rec => Chunk::Record(rec),
        }
    }
}
