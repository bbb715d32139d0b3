//! How `bench` reports what it measured: the [`Report`] as text or as one
//! JSON object (its keys are documented in [`super`] and in `--help`).

use super::measure::{Counts, Latency, Passes, Random};
use crate::frame::Framing;
use crate::io::Compression;
use crate::names::quoted;
use crate::view::PayloadKind;

/// `n / secs`, when there is something to divide.
fn rate(n: u64, secs: f64, records: u64) -> Option<f64> {
    (records > 0 && secs > 0.0).then(|| n as f64 / secs)
}

/// Everything measured, ready to print.
pub(super) struct Report<'a> {
    pub(super) file: &'a str,
    pub(super) framing: Framing,
    pub(super) compression: Compression,
    pub(super) payload: PayloadKind,
    pub(super) mapped: bool,
    pub(super) data_crc: bool,
    pub(super) bytes: u64,
    pub(super) counts: Counts,
    pub(super) sequential: Passes,
    pub(super) framing_only: Passes,
    pub(super) random: Random,
    pub(super) samples: u64,
    pub(super) seed: u64,
    pub(super) timer: u64,
}

/// A JSON number, or `null` for what is missing or not finite.
fn num(x: Option<f64>) -> String {
    match x {
        Some(x) if x.is_finite() => format!("{x}"),
        _ => "null".into(),
    }
}

/// `1.23 M` and the like (SI prefixes).
fn si(x: f64) -> String {
    if x >= 1e9 {
        format!("{:.2} G", x / 1e9)
    } else if x >= 1e6 {
        format!("{:.2} M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.2} k", x / 1e3)
    } else {
        format!("{x:.1}")
    }
}

fn secs_text(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.3} s")
    } else if s >= 1e-3 {
        format!("{:.3} ms", s * 1e3)
    } else {
        format!("{:.1} µs", s * 1e6)
    }
}

impl Report<'_> {
    fn rates(&self, p: &Passes) -> (Option<f64>, Option<f64>, Option<f64>, Option<f64>) {
        let records = self.counts.records;
        (
            rate(records, p.median, records),
            rate(self.bytes, p.median, records).map(|b| b / 1e9),
            rate(self.bytes, p.median, records).map(|b| b / f64::from(1 << 20)),
            rate(self.bytes, p.best, records).map(|b| b / 1e9),
        )
    }

    fn passes_json(&self, p: &Passes) -> String {
        let (rps, gbps, mibps, best_gbps) = self.rates(p);
        format!(
            "{{\"passes\":{},\"median_seconds\":{},\"best_seconds\":{},\"records_per_second\":{},\"gb_per_second\":{},\"mib_per_second\":{},\"best_gb_per_second\":{}}}",
            p.passes,
            num(Some(p.median)),
            num(Some(p.best)),
            num(rps),
            num(gbps),
            num(mibps),
            num(best_gbps)
        )
    }

    fn latency_json(l: &Latency) -> String {
        format!(
            "\"p50_ns\":{},\"p90_ns\":{},\"p99_ns\":{},\"p999_ns\":{},\"max_ns\":{},\"mean_ns\":{}",
            l.p50,
            l.p90,
            l.p99,
            l.p999,
            l.max,
            num(Some(l.mean))
        )
    }

    /// The report as one JSON object on one line.
    pub(super) fn json(&self) -> String {
        let c = &self.counts;
        let (random, floor, ratio) = match &self.random {
            Random::Skipped(why) => {
                let s = format!("{{\"skipped\":true,\"reason\":{}}}", quoted(why.as_bytes()));
                (s.clone(), s, None)
            }
            Random::Done {
                index,
                feature,
                get,
                floor,
                floor_width,
            } => (
                format!(
                    "{{\"skipped\":false,\"samples\":{},\"seed\":{},\"index\":\"{index}\",\"feature\":{},{}}}",
                    self.samples,
                    self.seed,
                    feature
                        .as_deref()
                        .map_or_else(|| "null".into(), quoted),
                    Self::latency_json(get)
                ),
                format!(
                    "{{\"skipped\":false,\"samples\":{},\"seed\":{},\"bytes_per_read\":{floor_width},{}}}",
                    self.samples,
                    self.seed,
                    Self::latency_json(floor)
                ),
                (floor.p50 > 0).then(|| get.p50 as f64 / floor.p50 as f64),
            ),
        };
        format!(
            "{{\"file\":{},\"framing\":\"{}\",\"compression\":\"{}\",\"payload\":\"{}\",\"mapped\":{},\"data_crc\":{},\"bytes\":{},\"stream_bytes\":{},\"records\":{},\"values\":{},\"data_bytes\":{},\"sequential\":{},\"framing_only\":{},\"random_access\":{},\"random_read_64\":{},\"ratio_p50\":{},\"timer_overhead_ns\":{}}}\n",
            quoted(self.file.as_bytes()),
            self.framing.name(),
            self.compression.name(),
            self.payload.name(),
            self.mapped,
            self.data_crc,
            self.bytes,
            c.stream_bytes,
            c.records,
            c.values,
            c.data_bytes,
            self.passes_json(&self.sequential),
            self.passes_json(&self.framing_only),
            random,
            floor,
            num(ratio),
            self.timer
        )
    }

    fn passes_text(&self, p: &Passes) -> String {
        let (rps, gbps, mibps, best_gbps) = self.rates(p);
        let opt = |x: Option<f64>, f: &dyn Fn(f64) -> String| x.map_or_else(|| "-".into(), f);
        format!(
            "{} records/s, {} GB/s ({} MiB/s), best {} GB/s; median {}, best {} of {} pass{}",
            opt(rps, &si),
            opt(gbps, &|x| format!("{x:.3}")),
            opt(mibps, &|x| format!("{x:.1}")),
            opt(best_gbps, &|x| format!("{x:.3}")),
            secs_text(p.median),
            secs_text(p.best),
            p.passes,
            if p.passes == 1 { "" } else { "es" }
        )
    }

    /// The report as text, one line per measure.
    pub(super) fn text(&self) -> String {
        use std::fmt::Write as _;
        let c = &self.counts;
        let mut s = String::new();
        let _ = writeln!(s, "file:            {}", self.file);
        let _ = writeln!(
            s,
            "format:          {} frames, {}, {} payloads, {}{}",
            self.framing.name(),
            match self.compression {
                Compression::Gzip => "GZIP stream",
                Compression::Zlib => "ZLIB stream",
                _ => "uncompressed",
            },
            self.payload.name(),
            if self.mapped {
                "memory-mapped"
            } else if matches!(self.compression, Compression::Gzip | Compression::Zlib) {
                "streamed"
            } else {
                "read into memory"
            },
            if self.data_crc {
                ""
            } else {
                ", data CRCs not checked"
            }
        );
        let _ = writeln!(
            s,
            "size:            {} bytes{}, {} records, {} values",
            self.bytes,
            if c.stream_bytes != self.bytes {
                format!(" ({} decompressed)", c.stream_bytes)
            } else {
                String::new()
            },
            c.records,
            c.values
        );
        let _ = writeln!(s, "sequential:      {}", self.passes_text(&self.sequential));
        let _ = writeln!(
            s,
            "framing only:    {}",
            self.passes_text(&self.framing_only)
        );
        let lat = |l: &Latency| {
            format!(
                "p50 {} ns, p90 {}, p99 {}, p99.9 {}, max {}",
                l.p50, l.p90, l.p99, l.p999, l.max
            )
        };
        match &self.random {
            Random::Skipped(why) => {
                let _ = writeln!(s, "random access:   skipped: {why}");
            }
            Random::Done {
                index,
                feature,
                get,
                floor,
                floor_width,
            } => {
                let _ = writeln!(
                    s,
                    "random access:   {} samples, seed {}, index {}, feature {}",
                    self.samples,
                    self.seed,
                    match *index {
                        "built" => "built in memory",
                        other => other,
                    },
                    feature.as_deref().map_or_else(|| "(none)".into(), quoted)
                );
                let _ = writeln!(s, "  get+lookup:    {}", lat(get));
                let _ = writeln!(s, "  {floor_width}-byte read:  {}", lat(floor));
                if floor.p50 > 0 {
                    let _ = writeln!(
                        s,
                        "  ratio (p50):   {:.2}× the random read",
                        get.p50 as f64 / floor.p50 as f64
                    );
                }
            }
        }
        let _ = writeln!(
            s,
            "timer:           {} ns per reading (included in the latencies)",
            self.timer
        );
        s
    }
}
