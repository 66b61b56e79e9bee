//! `agent-seer import bfcl <data-dir> -o <dir>`: BFCL's AST categories as agent-seer suites.

use std::io::Write;
use std::path::PathBuf;

use agent_seer::bfcl::{self, EnumMode, IntegerMode, Options, StringMode};
use clap::ValueEnum;

use super::Outcome;

#[derive(clap::Subcommand, Debug)]
pub enum Source {
    /// The Berkeley Function Calling Leaderboard's data (`bfcl_eval/data/` of the `bfcl-eval`
    /// package: BFCL_v4_*.json and possible_answer/).
    Bfcl(BfclArgs),
}

#[derive(Copy, Clone, Debug, ValueEnum)]
pub enum Enums {
    Check,
    Ignore,
}

#[derive(Copy, Clone, Debug, ValueEnum)]
pub enum Strings {
    Exact,
    Normalized,
}

#[derive(Copy, Clone, Debug, ValueEnum)]
pub enum Integers {
    JsonSchema,
    Strict,
}

#[derive(clap::Args, Debug)]
pub struct BfclArgs {
    /// The data directory.
    data: PathBuf,
    /// Where to write `harnesses/` (and `transcripts/` with --answers).
    #[arg(short, long)]
    output: PathBuf,
    /// Categories to import (default: simple, multiple, parallel, parallel_multiple).
    #[arg(long = "category", value_name = "NAME")]
    categories: Vec<String>,
    /// `check` JSON Schema enums (ours) or `ignore` them (BFCL's).
    #[arg(long = "enum", value_enum, default_value = "check")]
    enums: Enums,
    /// Compare strings `exact`ly (ours) or `normalized` (BFCL's standardisation).
    #[arg(long, value_enum, default_value = "exact")]
    strings: Strings,
    /// `json-schema`: 3.0 is an integer (ours); `strict`: it is not (BFCL's).
    #[arg(long, value_enum, default_value = "json-schema")]
    integers: Integers,
    /// Every switch as BFCL has it (--enum ignore --strings normalized --integers strict).
    #[arg(long, conflicts_with_all = ["enums", "strings", "integers"])]
    bfcl_compatible: bool,
    /// Also write each entry's first possible answer as a correct transcript.
    #[arg(long)]
    answers: bool,
}

pub fn run(source: Source, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let Source::Bfcl(args) = source;
    let mut opts = if args.bfcl_compatible {
        Options::bfcl_compatible()
    } else {
        Options {
            enums: match args.enums {
                Enums::Check => EnumMode::Check,
                Enums::Ignore => EnumMode::Ignore,
            },
            strings: match args.strings {
                Strings::Exact => StringMode::Exact,
                Strings::Normalized => StringMode::Normalized,
            },
            integers: match args.integers {
                Integers::JsonSchema => IntegerMode::JsonSchema,
                Integers::Strict => IntegerMode::Strict,
            },
            answers: false,
        }
    };
    opts.answers = args.answers;
    let categories: Vec<&str> = if args.categories.is_empty() {
        bfcl::CATEGORIES.to_vec()
    } else {
        args.categories.iter().map(String::as_str).collect()
    };
    let report = bfcl::import(&args.data, &args.output, &categories, opts)?;
    for (suite, n) in &report.suites {
        writeln!(out, "{suite}: {n} scenario(s)")?;
    }
    for s in &report.skipped {
        writeln!(out, "skipped {s}")?;
    }
    writeln!(
        out,
        "wrote {} file(s) under {}; {} entr{} skipped",
        report.files.len(),
        args.output.display(),
        report.skipped.len(),
        if report.skipped.len() == 1 {
            "y"
        } else {
            "ies"
        }
    )?;
    Ok(Outcome::Clean)
}
