//! `loadgen report`: every figure of `docs/performance.md`, over several runs, as one Markdown table.

use std::time::{Duration, Instant};

use crate::idle::{IdleFigures, idle};
use crate::play::{Baseline, Baselines, Run, play, ratio};
use crate::{Bots, IDLE_HOLD_SECONDS, IdleArgs, PlayArgs, ReportArgs, StoreChoice};

/// How a figure of the report's table is written.
#[derive(Clone, Copy)]
pub(crate) enum Unit {
    /// A whole number, with thousands separated by commas.
    Whole,
    /// A figure to about three significant digits (milliseconds, microseconds).
    Significant,
    /// A ratio, to two decimals, with a `×`.
    Ratio,
}

/// A measure of a play run: its row's label, how its figures are written, its figure for one
/// workload, and whether the table gives ratios for it (the report's, the game's to the
/// baselines; `--pairs`, SQLite's to the memory store's).
pub(crate) type Measure = (&'static str, Unit, fn(&Run) -> f64, bool);

/// The play runs' measures, one row of the table each for the saturated runs and again for the
/// paced ones.
pub(crate) const MEASURES: [Measure; 8] = [
    ("actions/s", Unit::Whole, Run::actions_per_second, false),
    ("p50 latency (ms)", Unit::Significant, Run::p50_ms, false),
    ("p99 latency (ms)", Unit::Significant, Run::p99_ms, true),
    (
        "server CPU per action (µs)",
        Unit::Whole,
        Run::cpu_per_action_us,
        true,
    ),
    (
        "of which in user space (µs)",
        Unit::Significant,
        Run::user_per_action_us,
        true,
    ),
    (
        "of which in the kernel (µs)",
        Unit::Significant,
        Run::system_per_action_us,
        true,
    ),
    (
        "bytes received per client per action",
        Unit::Whole,
        Run::bytes_per_client_per_action,
        false,
    ),
    (
        "server RSS after the run (KiB)",
        Unit::Whole,
        Run::memory_after_kib,
        false,
    ),
];

/// One play run of the report: the game and its baselines.
pub(crate) struct Quartet {
    /// The game's workload.
    game: Run,
    /// The same rooms against the room relay, the relay and the echo.
    baselines: Baselines,
}

impl Quartet {
    /// The runs of the table's first four columns: game, room relay, relay, echo.
    fn runs(&self) -> [(&'static str, &Run); 4] {
        let [room_relay, relay, echo] = &self.baselines;
        [
            ("game", &self.game),
            (Baseline::RoomRelay.name(), room_relay),
            (Baseline::Relay.name(), relay),
            (Baseline::Echo.name(), echo),
        ]
    }
}

/// The table's ratio columns: the numerator's and the denominator's columns among
/// [`Quartet::runs`]: the game to each baseline, then the room relay to the relay (what the
/// room's task costs by itself).
const RATIOS: [(usize, usize); 4] = [(0, 1), (0, 2), (0, 3), (1, 2)];

/// The report mode: `--runs` times, a saturated play run, a paced one and an idle one; then
/// the table of their medians and ranges, the command line, and what went wrong in any run.
pub(crate) async fn report(args: ReportArgs) -> Result<(), String> {
    if args.runs == 0 {
        return Err("at least one run".into());
    }
    let play_args = |think_ms: u64| PlayArgs {
        common: args.common.clone(),
        rooms: args.rooms,
        humans: args.humans,
        seconds: args.seconds,
        echo: true,
        think_ms,
        store: StoreChoice::Memory,
        pairs: 1,
        bot_rooms: 0,
        bots: Bots::Expert,
        compress: args.compress,
    };
    let idle_args = || IdleArgs {
        common: args.common.clone(),
        connections: args.idle_connections,
        hold: IDLE_HOLD_SECONDS,
    };
    // Check every flag before the first run, not halfway through the report.
    let clients = play_args(0).clients()?;
    idle_args().check()?;
    let conditions = [
        ("saturated".to_owned(), 0),
        (
            format!("paced (`--think-ms {}`)", args.think_ms),
            args.think_ms,
        ),
    ];
    let started = Instant::now();
    let mut plays: [Vec<Quartet>; 2] = [Vec::new(), Vec::new()];
    let mut idles = Vec::new();
    let mut notes = Vec::new();
    for run in 1..=args.runs {
        for ((name, think_ms), quartets) in conditions.iter().zip(&mut plays) {
            println!(
                "== report: run {run} of {}, {name}: game, room relay, relay, echo ({:.0} s in)",
                args.runs,
                started.elapsed().as_secs_f64()
            );
            // Let the previous server's sockets finish closing first.
            tokio::time::sleep(Duration::from_secs(2)).await;
            let figures = play(play_args(*think_ms))
                .await
                .map_err(|e| format!("run {run}, {name}: {e}"))?;
            let baselines = figures
                .baselines
                .ok_or_else(|| format!("run {run}, {name}: no baselines"))?;
            let quartet = Quartet {
                game: figures.game,
                baselines,
            };
            let mut summary = Vec::new();
            for (workload, measured) in quartet.runs() {
                summary.push(format!(
                    "{workload} {:.0} actions/s, p99 {:.3} ms, {:.0} us CPU",
                    measured.actions_per_second(),
                    measured.p99_ms(),
                    measured.cpu_per_action_us()
                ));
                let t = &measured.tally;
                if t.error_count() > 0 || t.connected < clients as u64 {
                    notes.push(format!(
                        "run {run}, {name}, {workload}: {} of {clients} clients connected, {} errors {:?}",
                        t.connected,
                        t.error_count(),
                        t.errors
                    ));
                }
            }
            println!("report: run {run}, {name}: {}", summary.join("; "));
            quartets.push(quartet);
        }
        println!(
            "== report: run {run} of {}, idle: {} connections ({:.0} s in)",
            args.runs,
            args.idle_connections,
            started.elapsed().as_secs_f64()
        );
        tokio::time::sleep(Duration::from_secs(2)).await;
        let figures = idle(idle_args())
            .await
            .map_err(|e| format!("run {run}, idle: {e}"))?;
        println!(
            "report: run {run}, idle: {:.0} bytes per connection",
            figures.bytes_per_connection
        );
        let errors: u64 = figures.errors.values().sum();
        if errors > 0 || figures.held < args.idle_connections || figures.still_open < figures.held {
            notes.push(format!(
                "run {run}, idle: {} of {} connections held, {} still open, {errors} errors {:?}",
                figures.held, args.idle_connections, figures.still_open, figures.errors
            ));
        }
        idles.push(figures);
    }
    println!(
        "== report: {} runs in {:.0} s",
        args.runs,
        started.elapsed().as_secs_f64()
    );
    println!();
    println!(
        "{} rooms x {} people = {} clients, {} s of each workload, median (min–max) of {} runs; \
         server and loadgen on one machine of {} cores",
        args.rooms,
        args.humans,
        thousands(clients as f64),
        args.seconds,
        args.runs,
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!();
    println!(
        "{}",
        report_table(&conditions, &plays, &idles, args.idle_connections)
    );
    println!();
    println!("Command: `{}`", command_line());
    println!();
    if notes.is_empty() {
        println!("Every client connected, and no errors, in every run.");
    } else {
        println!("Errors or missing clients:");
        for note in notes {
            println!("- {note}");
        }
    }
    Ok(())
}

/// The report's Markdown table: a row per measure, saturated then paced, then idle; a column
/// per workload, then the ratios of [`RATIOS`].
pub(crate) fn report_table(
    conditions: &[(String, u64); 2],
    plays: &[Vec<Quartet>; 2],
    idles: &[IdleFigures],
    idle_connections: usize,
) -> String {
    let mut lines = vec![
        "| median (min–max) | game | room relay | relay | echo | game / room relay | game / relay \
         | game / echo | room relay / relay |"
            .to_owned(),
        "|---|---|---|---|---|---|---|---|---|".to_owned(),
    ];
    for ((name, _), quartets) in conditions.iter().zip(plays) {
        for (label, unit, measure, ratios) in MEASURES {
            let mut cells: Vec<String> = (0..4)
                .map(|column| {
                    let values: Vec<f64> = quartets
                        .iter()
                        .map(|quartet| measure(quartet.runs()[column].1))
                        .collect();
                    spread_cell(&values, unit)
                })
                .collect();
            for (above, below) in RATIOS {
                cells.push(if ratios {
                    let values: Vec<f64> = quartets
                        .iter()
                        .map(|quartet| {
                            let runs = quartet.runs();
                            ratio(measure(runs[above].1), measure(runs[below].1))
                        })
                        .collect();
                    spread_cell(&values, Unit::Ratio)
                } else {
                    String::new()
                });
            }
            cells.insert(0, format!("{name}: {label}"));
            lines.push(table_row(&cells));
        }
    }
    let per_connection: Vec<f64> = idles.iter().map(|f| f.bytes_per_connection).collect();
    lines.push(table_row(&[
        format!(
            "idle: memory per connection at {} connections (bytes)",
            thousands(idle_connections as f64)
        ),
        spread_cell(&per_connection, Unit::Whole),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
    ]));
    lines.join("\n")
}

/// A row of a Markdown table (an empty cell is written `| |`).
pub(crate) fn table_row(cells: &[String]) -> String {
    let mut row = "|".to_owned();
    for cell in cells {
        if !cell.is_empty() {
            row.push(' ');
            row.push_str(cell);
        }
        row.push_str(" |");
    }
    row
}

/// `median (min–max)` of `values`, written as `unit` says (empty if there are none).
pub(crate) fn spread_cell(values: &[f64], unit: Unit) -> String {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let (Some(&min), Some(&max)) = (sorted.first(), sorted.last()) else {
        return String::new();
    };
    let middle = sorted.len() / 2;
    let median = if sorted.len() % 2 == 0 {
        (sorted[middle - 1] + sorted[middle]) / 2.0
    } else {
        sorted[middle]
    };
    let write = |v: f64| match unit {
        Unit::Whole => thousands(v),
        Unit::Significant => {
            let decimals = if v >= 100.0 {
                0
            } else if v >= 10.0 {
                1
            } else if v >= 1.0 {
                2
            } else {
                3
            };
            format!("{v:.decimals$}")
        }
        Unit::Ratio => format!("{v:.2}×"),
    };
    format!("{} ({}–{})", write(median), write(min), write(max))
}

/// `v` rounded to a whole number, its thousands separated by commas.
pub(crate) fn thousands(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    let digits = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (n, digit) in digits.chars().enumerate() {
        if n > 0 && (digits.len() - n) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    if v.round() < 0.0 {
        out.insert(0, '-');
    }
    out
}

/// This program's command line, each argument quoted for a POSIX shell if it needs to be.
pub(crate) fn command_line() -> String {
    std::env::args()
        .map(|arg| {
            let plain = !arg.is_empty()
                && arg
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
            if plain {
                arg
            } else {
                format!("'{}'", arg.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::run;

    /// A run of the report: the game's, the room relay's, the relay's and the echo's CPU
    /// seconds over 10,000 actions (so 10 s is 1,000 µs an action), a quarter of it in the
    /// kernel.
    fn quartet(cpu: [f64; 4]) -> Quartet {
        let [game, room_relay, relay, echo] = cpu.map(|cpu| Run {
            server_system: cpu / 4.0,
            ..run(10_000, 1_000, cpu, (0.0, 0.0))
        });
        Quartet {
            game,
            baselines: [room_relay, relay, echo],
        }
    }

    #[test]
    fn the_report_table_gives_each_ratio_within_a_run() {
        let conditions = [("saturated".to_owned(), 0), ("paced".to_owned(), 20)];
        let plays = [
            vec![
                quartet([0.30, 0.20, 0.15, 0.05]),
                quartet([0.27, 0.18, 0.20, 0.05]),
            ],
            vec![quartet([0.40, 0.30, 0.20, 0.10])],
        ];
        let table = report_table(&conditions, &plays, &[], 1_000);
        let lines: Vec<&str> = table.lines().collect();
        // A header, its rule, every measure under each condition, and the idle row.
        assert_eq!(lines.len(), 2 + 2 * MEASURES.len() + 1, "{table}");
        assert_eq!(
            lines[0],
            "| median (min–max) | game | room relay | relay | echo | game / room relay \
             | game / relay | game / echo | room relay / relay |"
        );
        // The game to the relay is 2.00 in one run and 1.35 in the other: the median of the
        // ratios, not the ratio of the medians (28.5 / 17.5 = 1.63).
        assert_eq!(
            lines[5],
            "| saturated: server CPU per action (µs) | 28 (27–30) | 19 (18–20) | 18 (15–20) \
             | 5 (5–5) | 1.50× (1.50×–1.50×) | 1.68× (1.35×–2.00×) \
             | 5.70× (5.40×–6.00×) | 1.12× (0.90×–1.33×) |"
        );
        // The CPU split between user space and the kernel, each with its ratios.
        assert_eq!(
            lines[7],
            "| saturated: of which in the kernel (µs) | 7.12 (6.75–7.50) | 4.75 (4.50–5.00) \
             | 4.38 (3.75–5.00) | 1.25 (1.25–1.25) | 1.50× (1.50×–1.50×) | 1.68× (1.35×–2.00×) \
             | 5.70× (5.40×–6.00×) | 1.12× (0.90×–1.33×) |"
        );
        // Throughput has no ratio columns.
        assert!(lines[2].ends_with("| | | | |"), "{}", lines[2]);
        assert!(
            lines[13].starts_with("| paced: server CPU per action (µs) | 40 (40–40) |"),
            "{}",
            lines[13]
        );
    }
}
