//! Prometheus metrics of the service, in the text exposition format, without a client
//! library: four families are all it needs.
//!
//! Owns the counters, the gauges (in-flight requests, open connections, queued
//! blocking jobs, sessions in memory, resident memory) and the histogram, and their
//! rendering for `GET /metrics`. It does not decide what to count: the middleware
//! counts requests, the accept loop connections, handlers decisions and analyses.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use crate::model::vocab::FallbackReason;

/// Upper bounds (seconds) of the analysis latency buckets: analysis is sub-millisecond
/// when all is well, the top buckets catch parse budgets being hit.
const LATENCY_BUCKETS: [f64; 12] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0,
];

#[derive(Debug, Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<(String, String, u16), u64>>,
    decisions: Mutex<BTreeMap<String, u64>>,
    fallbacks: Mutex<BTreeMap<String, u64>>,
    latency_buckets: [AtomicU64; LATENCY_BUCKETS.len()],
    latency_count: AtomicU64,
    latency_sum_nanos: AtomicU64,
    in_flight: AtomicI64,
    connections: AtomicI64,
    blocking_queued: AtomicI64,
}

/// Counts one unit of a gauge for as long as it lives.
#[derive(Debug)]
pub struct GaugeGuard<'a>(&'a AtomicI64);

impl Drop for GaugeGuard<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Metrics {
    pub fn new() -> Self {
        Self::default()
    }

    /// One answered request; `route` is the matched route template (not the raw path,
    /// so ids do not explode the label space).
    pub fn record_request(&self, route: &str, method: &str, status: u16) {
        if let Ok(mut m) = self.requests.lock() {
            *m.entry((route.to_string(), method.to_string(), status))
                .or_default() += 1;
        }
    }

    /// A request in flight until the guard drops.
    pub fn request_started(&self) -> GaugeGuard<'_> {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        GaugeGuard(&self.in_flight)
    }

    /// An open connection until the guard drops.
    pub fn connection_opened(&self) -> GaugeGuard<'_> {
        self.connections.fetch_add(1, Ordering::Relaxed);
        GaugeGuard(&self.connections)
    }

    pub fn in_flight(&self) -> i64 {
        self.in_flight.load(Ordering::Relaxed)
    }

    pub fn connections(&self) -> i64 {
        self.connections.load(Ordering::Relaxed)
    }

    /// Blocking jobs admitted but not yet running (`delta` is +1 or -1).
    pub fn blocking_queued(&self, delta: i64) {
        self.blocking_queued.fetch_add(delta, Ordering::Relaxed);
    }

    /// One call decision (`allow`, `ask`, `deny`).
    pub fn record_decision(&self, action: &str) {
        if let Ok(mut m) = self.decisions.lock() {
            *m.entry(action.to_string()).or_default() += 1;
        }
    }

    /// One analysis: its duration and, when the AST engine handed over, why.
    pub fn record_analysis(&self, took: Duration, fallback: Option<FallbackReason>) {
        let secs = took.as_secs_f64();
        for (bound, count) in LATENCY_BUCKETS.iter().zip(&self.latency_buckets) {
            if secs <= *bound {
                count.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.latency_count.fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        self.latency_sum_nanos.fetch_add(nanos, Ordering::Relaxed);
        if let Some(reason) = fallback
            && let Ok(mut m) = self.fallbacks.lock()
        {
            *m.entry(reason.as_str().to_string()).or_default() += 1;
        }
    }

    /// The Prometheus text exposition (version 0.0.4); `sessions` is the number of
    /// sessions held in memory and `session_bytes` what they hold.
    pub fn render_with(&self, sessions: usize, session_bytes: usize) -> String {
        let mut out = self.render();
        let gauges: [(&str, &str, i64); 6] = [
            (
                "khaelor_http_requests_in_flight",
                "HTTP requests being handled.",
                self.in_flight(),
            ),
            (
                "khaelor_http_connections_open",
                "Open client connections.",
                self.connections(),
            ),
            (
                "khaelor_blocking_jobs_queued",
                "Blocking jobs admitted to the pool and waiting for a thread.",
                self.blocking_queued.load(Ordering::Relaxed),
            ),
            (
                "khaelor_sessions_in_memory",
                "Sessions held in memory (the logs on disk are the truth).",
                i64::try_from(sessions).unwrap_or(i64::MAX),
            ),
            (
                "khaelor_session_resident_bytes",
                "Bytes the sessions in memory hold, as last measured (bounded by --max-session-memory).",
                i64::try_from(session_bytes).unwrap_or(i64::MAX),
            ),
            (
                "khaelor_process_resident_memory_bytes",
                "Resident set size of the server process.",
                resident_bytes().map_or(-1, |b| i64::try_from(b).unwrap_or(i64::MAX)),
            ),
        ];
        for (name, help, value) in gauges {
            let _ = writeln!(out, "# HELP {name} {help}");
            let _ = writeln!(out, "# TYPE {name} gauge");
            let _ = writeln!(out, "{name} {value}");
        }
        out
    }

    /// The counters and the histogram (version 0.0.4 text).
    pub fn render(&self) -> String {
        let mut out = String::new();
        out.push_str("# HELP khaelor_http_requests_total HTTP requests answered, by route template, method and status.\n");
        out.push_str("# TYPE khaelor_http_requests_total counter\n");
        if let Ok(m) = self.requests.lock() {
            for ((route, method, status), n) in m.iter() {
                let _ = writeln!(
                    out,
                    "khaelor_http_requests_total{{route=\"{}\",method=\"{}\",status=\"{status}\"}} {n}",
                    escape(route),
                    escape(method)
                );
            }
        }
        out.push_str("# HELP khaelor_decisions_total Tool call decisions, by action.\n");
        out.push_str("# TYPE khaelor_decisions_total counter\n");
        if let Ok(m) = self.decisions.lock() {
            for action in ["allow", "ask", "deny"] {
                let n = m.get(action).copied().unwrap_or(0);
                let _ = writeln!(out, "khaelor_decisions_total{{action=\"{action}\"}} {n}");
            }
        }
        out.push_str("# HELP khaelor_analysis_fallbacks_total AST analyses that fell back to the lexer, by reason.\n");
        out.push_str("# TYPE khaelor_analysis_fallbacks_total counter\n");
        if let Ok(m) = self.fallbacks.lock() {
            for (reason, n) in m.iter() {
                let _ = writeln!(
                    out,
                    "khaelor_analysis_fallbacks_total{{reason=\"{}\"}} {n}",
                    escape(reason)
                );
            }
        }
        out.push_str(
            "# HELP khaelor_analysis_duration_seconds Time spent analysing bash commands.\n",
        );
        out.push_str("# TYPE khaelor_analysis_duration_seconds histogram\n");
        for (bound, count) in LATENCY_BUCKETS.iter().zip(&self.latency_buckets) {
            let _ = writeln!(
                out,
                "khaelor_analysis_duration_seconds_bucket{{le=\"{bound}\"}} {}",
                count.load(Ordering::Relaxed)
            );
        }
        let count = self.latency_count.load(Ordering::Relaxed);
        let _ = writeln!(
            out,
            "khaelor_analysis_duration_seconds_bucket{{le=\"+Inf\"}} {count}"
        );
        let sum = self.latency_sum_nanos.load(Ordering::Relaxed) as f64 / 1e9;
        let _ = writeln!(out, "khaelor_analysis_duration_seconds_sum {sum}");
        let _ = writeln!(out, "khaelor_analysis_duration_seconds_count {count}");
        out
    }
}

/// The resident set size from `/proc/self/statm` (pages times the page size, which is
/// 4 KiB on the platforms this runs on); `None` where there is no procfs.
pub fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// Label value escaping of the text format: backslash, double quote, newline.
fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_families() {
        let m = Metrics::new();
        m.record_request("/v1/analyze", "POST", 200);
        m.record_request("/v1/analyze", "POST", 200);
        m.record_decision("ask");
        m.record_analysis(Duration::from_micros(300), Some(FallbackReason::ParseError));
        m.record_analysis(Duration::from_secs(2), None);
        let text = m.render();
        assert!(text.contains("khaelor_http_requests_total{route=\"/v1/analyze\",method=\"POST\",status=\"200\"} 2\n"), "{text}");
        assert!(text.contains("khaelor_decisions_total{action=\"ask\"} 1\n"));
        assert!(text.contains("khaelor_decisions_total{action=\"deny\"} 0\n"));
        assert!(text.contains("khaelor_analysis_fallbacks_total{reason=\"parseError\"} 1\n"));
        assert!(text.contains("khaelor_analysis_duration_seconds_bucket{le=\"0.00025\"} 0\n"));
        assert!(text.contains("khaelor_analysis_duration_seconds_bucket{le=\"0.0005\"} 1\n"));
        assert!(text.contains("khaelor_analysis_duration_seconds_bucket{le=\"1\"} 1\n"));
        assert!(text.contains("khaelor_analysis_duration_seconds_bucket{le=\"+Inf\"} 2\n"));
        assert!(text.contains("khaelor_analysis_duration_seconds_count 2\n"));
        assert_eq!(escape("a\"b\\c\n"), "a\\\"b\\\\c\\n");
        let g = m.request_started();
        let text = m.render_with(3, 4096);
        assert!(
            text.contains("khaelor_http_requests_in_flight 1\n"),
            "{text}"
        );
        assert!(text.contains("khaelor_sessions_in_memory 3\n"), "{text}");
        drop(g);
        assert_eq!(m.in_flight(), 0);
        assert!(resident_bytes().is_some_and(|b| b > 0));
    }
}
