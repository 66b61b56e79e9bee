//! Batch APIs: many structured requests as one provider job, billed at half the list price
//! and answered within a day — OpenAI Batch (a JSONL file under `/files`, then `/batches`, for
//! chat completions and the Responses API), Anthropic Message Batches, and the Gemini API's
//! batch mode (`models/{model}:batchGenerateContent`, requests inline). Vertex AI's batch
//! prediction reads its input from Cloud Storage or BigQuery and is not spoken here.
//!
//! [`Client::batch_structured`] is [`Client::structured`] for many requests at once, behind
//! the same cache, ledger and secrets:
//!
//! 1. Requests the cache answers are answered from it (replay mode answers only from it, and a
//!    miss is the same [`LlmError::CacheMiss`] as ever); identical requests are sent once.
//! 2. Before anything is sent, each round's cost is estimated and handed to the caller
//!    ([`BatchEvent::Estimate`]): prompt tokens at one per two bytes of each request's body
//!    plus what a provider adds to a request ([`TOKENS_ADDED_PER_REQUEST`]), answer tokens at
//!    their limit, at half the list price — an estimate that errs high. With a budget
//!    ([`BatchOptions::max_cost_usd`]) a round that could take the spend past it is not sent:
//!    its requests end in [`LlmError::OverBudget`], its own outcome, and everything answered
//!    so far is kept. The spend counts the tokens the provider reported for every answer,
//!    rejected ones included.
//! 3. The round goes out in jobs within each provider's limits (requests and bytes a job),
//!    which are polled until they end. A job is created once: after a timeout or a 5xx the
//!    provider may have made it, so only a 429 is asked again. Each answer is validated as
//!    [`Client::structured`] validates one; a valid answer is cached under the original
//!    request, so a later run (or a replay) finds it. A rejected answer, and a request that
//!    expired or met a transient error, go out again in the next round, a rejected one with
//!    the problem fed back: three rounds at most, as three answers at most are asked for one
//!    call.
//! 4. Each job is journaled under the cache directory (`batches/`) the moment the provider
//!    names it. A run that is stopped, or that waits longer than [`BatchOptions::wait`],
//!    loses nothing: the next run with the same requests collects the job instead of paying
//!    for it again, and a job that answered requests a run did not ask stays journaled for
//!    those. A journaled job the provider will not show any more (gone, another account's
//!    key) is given up and its requests go out again.
//!
//! Per-request failures stay per request (one errored request does not fail the rest); a job
//! the provider fails as a whole fails its requests with the provider's reason.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::ledger::Price;
use super::providers::{excerpt, malformed, send};
use super::structured::{ATTEMPTS, accept, retry_request};
use super::{Answer, CacheMode, Client, LlmError, Provider, Request};

/// How a batch is run: the budget, the price it is held to, and how long to wait.
#[derive(Clone, Debug)]
pub struct BatchOptions {
    /// The most the whole call may spend, in USD at the batch price (`--max-cost`); None for
    /// no limit.
    pub max_cost_usd: Option<f64>,
    /// The list price to estimate with (`--price IN,OUT`), for a model whose price is not
    /// built in; None takes [`Price::list`].
    pub price: Option<Price>,
    /// Between two looks at a running job; `AGENT_SEER_BATCH_POLL_MS`, 30 s by default.
    pub poll: Duration,
    /// How long to wait for the jobs of one round before leaving them to a later run;
    /// `AGENT_SEER_BATCH_WAIT_SECS`, 25 hours by default (the providers' window is 24).
    pub wait: Duration,
    /// The most requests in one job; the provider's own limit when None (50,000 for OpenAI,
    /// 100,000 for Anthropic; Gemini's inline jobs are bounded by their 20 MB only).
    /// `AGENT_SEER_BATCH_MAX_REQUESTS`.
    pub max_requests_per_job: Option<usize>,
}

impl BatchOptions {
    /// The defaults, with the environment's `AGENT_SEER_BATCH_POLL_MS`,
    /// `AGENT_SEER_BATCH_WAIT_SECS` and `AGENT_SEER_BATCH_MAX_REQUESTS`.
    pub fn from_env() -> Self {
        let num = |k: &str| {
            std::env::var(k)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
        };
        Self {
            max_cost_usd: None,
            price: None,
            poll: Duration::from_millis(num("AGENT_SEER_BATCH_POLL_MS").unwrap_or(30_000)),
            wait: Duration::from_secs(num("AGENT_SEER_BATCH_WAIT_SECS").unwrap_or(25 * 3600)),
            max_requests_per_job: num("AGENT_SEER_BATCH_MAX_REQUESTS").map(|n| (n as usize).max(1)),
        }
    }
}

/// What one round will send, and what it may cost, before it is sent.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Estimate {
    /// 1 for the first round; later rounds resend rejected, expired and failed requests.
    pub round: u32,
    /// Requests this round sends.
    pub requests: usize,
    /// Requests the cache answered (first round only).
    pub cached: usize,
    /// Requests already in a job an earlier run sent, collected instead of sent.
    pub resumed: usize,
    /// Prompt tokens, estimated from the prompts' length.
    pub input_tokens: u64,
    /// Answer tokens at most: every request's token limit.
    pub output_tokens: u64,
    /// USD at most at the batch price; None when the model's price is unknown.
    pub usd: Option<f64>,
    /// USD spent by the rounds before, from the tokens the provider counted.
    pub spent_usd: Option<f64>,
    /// The budget, if one was set.
    pub budget_usd: Option<f64>,
}

/// What a batch run tells its caller as it goes (the CLI prints these; the library never
/// prints).
#[derive(Clone, Debug, PartialEq)]
pub enum BatchEvent {
    /// A round's estimate, before anything of it is sent.
    Estimate(Estimate),
    /// A job was created (or found in the journal, `resumed`).
    Submitted {
        /// The provider's id of the job.
        id: String,
        /// Requests in it.
        requests: usize,
        /// Sent by an earlier run and collected now.
        resumed: bool,
    },
    /// A job's status, each time it was looked at.
    Status {
        /// The provider's id of the job.
        id: String,
        /// The provider's word for it (`in_progress`, `BATCH_STATE_RUNNING`, …).
        status: String,
        /// Requests done, as the provider counts them.
        done: u64,
        /// Requests in the job.
        total: u64,
    },
    /// A job's results were read.
    Ended {
        /// The provider's id of the job.
        id: String,
        /// Requests answered with a valid answer.
        valid: usize,
        /// Requests that failed or were rejected (some go out again).
        failed: usize,
    },
}

/// One request's outcome in a provider's results.
enum ItemResult {
    Answer(Answer),
    Error { message: String, retry: bool },
}

/// A job at the provider, as the journal keeps it.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Journal {
    version: u32,
    provider: String,
    model: String,
    /// The provider's id (`batch_…`, `msgbatch_…`, `batches/…`).
    id: String,
    /// Each request's id in the job → the cache key of the request it answers.
    items: BTreeMap<String, String>,
}

/// A state the caller waits on.
enum JobState {
    Running {
        status: String,
        done: u64,
        total: u64,
    },
    /// Ended: its results can be read (some requests may have failed or expired).
    Ended { status: String, results: Results },
    /// Ended without results: every request of it failed for `message`.
    Failed {
        status: String,
        message: String,
        retry: bool,
    },
}

/// Where an ended job's results are.
enum Results {
    /// OpenAI: the output and error files.
    Files {
        output: Option<String>,
        errors: Option<String>,
    },
    /// Anthropic: the results of the batch.
    Anthropic { id: String },
    /// Gemini: inline in the operation.
    Inline(Value),
}

/// One distinct request.
struct Item {
    request: Request,
    key: String,
}

/// Where the requests of one call stand.
struct Run<T> {
    /// Each item's result, once it has one.
    done: Vec<Option<Result<T, LlmError>>>,
    /// Items still to answer, with the request the next round sends for each.
    open: BTreeMap<usize, Request>,
    /// Each open item's last problem, for when no round is left.
    last_error: HashMap<usize, LlmError>,
    /// USD spent so far at the batch price; None when the price is unknown.
    spent: Option<f64>,
}

impl<T> Run<T> {
    fn finish(&mut self, i: usize, r: Result<T, LlmError>) {
        self.done[i] = Some(r);
        self.open.remove(&i);
        self.last_error.remove(&i);
    }

    /// A failed request: open for the next round when worth another try, else done.
    fn fail(&mut self, i: usize, e: LlmError, retry: bool) {
        if retry {
            self.last_error.insert(i, e);
        } else {
            self.finish(i, Err(e));
        }
    }
}

impl Client {
    /// [`Client::structured`] for many requests through the provider's batch API: one result
    /// per request, in order. Requests the cache answers are not sent. `on_event` hears each
    /// round's estimate before anything is sent, and each job's progress.
    ///
    /// Fails as a whole only on setup (Vertex AI, which has no batch API spoken here; a budget
    /// with no price to hold it to; a cache or journal that cannot be written), or when a job
    /// this call sent cannot be read any more (its journal stays, so the next run collects
    /// it). A provider that refuses a job (an OpenAI-compatible local server answers 404 on
    /// `/files`) fails that job's requests, each with the provider's answer.
    pub async fn batch_structured<T, F>(
        &self,
        requests: &[Request],
        check: F,
        options: &BatchOptions,
        on_event: &(dyn Fn(BatchEvent) + Send + Sync),
    ) -> Result<Vec<Result<T, LlmError>>, LlmError>
    where
        T: serde::de::DeserializeOwned + Clone,
        F: Fn(&T) -> Result<(), String>,
    {
        let provider = self.config.provider.name();
        let model = self.config.model.clone();
        if matches!(self.config.provider, Provider::Vertex { .. }) {
            return Err(LlmError::Config(
                "vertex: batch prediction jobs read their requests from Cloud Storage or BigQuery, which agent-seer does not write; use gemini:MODEL with GEMINI_API_KEY for batches, or leave out --batch".into(),
            ));
        }
        if let Some(p) = options.price {
            self.ledger.set_price(&model, p);
        }
        let price = options.price.or_else(|| Price::list(&model));
        if let (Some(budget), None) = (options.max_cost_usd, price) {
            return Err(LlmError::Config(format!(
                "--max-cost {budget}: no list price is known for {provider}:{model}; give it with --price INPUT,OUTPUT (USD per million tokens)"
            )));
        }
        if let Some(b) = options.max_cost_usd
            && (!b.is_finite() || b < 0.0)
        {
            return Err(LlmError::Config(format!(
                "--max-cost {b}: a budget is a finite number of USD, 0 or more"
            )));
        }

        // Distinct requests, by cache key; `slots[i]` is request i's item.
        let mut items: Vec<Item> = Vec::new();
        let mut by_key: HashMap<String, usize> = HashMap::new();
        let slots: Vec<usize> = requests
            .iter()
            .map(|r| {
                let key = self.cache_key(r);
                *by_key.entry(key.clone()).or_insert_with(|| {
                    items.push(Item {
                        request: r.clone(),
                        key,
                    });
                    items.len() - 1
                })
            })
            .collect();
        let mut run = Run {
            done: (0..items.len()).map(|_| None).collect(),
            open: BTreeMap::new(),
            last_error: HashMap::new(),
            spent: price.map(|_| 0.0),
        };

        // 1. The cache.
        let mut cached = 0;
        for (i, item) in items.iter().enumerate() {
            match self.cache.get(&item.key) {
                Ok(Some(mut hit)) => {
                    hit.cached = true;
                    if let Ok(t) = accept::<T, F>(&hit, item.request.max_tokens, &check) {
                        self.ledger.record(provider, &model, hit.usage, true);
                        run.done[i] = Some(Ok(t));
                        cached += 1;
                    }
                }
                Ok(None) => {}
                Err(e) => run.done[i] = Some(Err(e)),
            }
        }
        let first = |run: &Run<T>| {
            estimate(
                1,
                &[],
                &HashMap::new(),
                cached,
                0,
                price,
                run.spent,
                options.max_cost_usd,
            )
        };
        if self.config.mode == CacheMode::Replay {
            // Nothing is sent in replay mode: the misses are errors already.
            on_event(BatchEvent::Estimate(first(&run)));
            return Ok(slots.iter().map(|&s| take(&run.done, s)).collect());
        }
        run.open = (0..items.len())
            .filter(|i| run.done[*i].is_none())
            .map(|i| (i, items[i].request.clone()))
            .collect();
        if run.open.is_empty() {
            on_event(BatchEvent::Estimate(first(&run)));
        }

        // 2. Rounds: each sends what is still open (the request, or its retry with the
        //    problem fed back), after the estimate and the budget.
        let journal = JournalDir::new(&self.config.cache_dir);
        for round in 1..=ATTEMPTS {
            if run.open.is_empty() {
                break;
            }
            // Jobs an earlier run sent for these requests are collected, not sent again.
            let open_keys: std::collections::HashSet<&str> =
                run.open.keys().map(|&i| items[i].key.as_str()).collect();
            let resumed: Vec<Journal> = journal
                .pending(provider, &model)
                .into_iter()
                .filter(|j| j.items.values().any(|k| open_keys.contains(k.as_str())))
                .collect();
            let in_resumed: std::collections::HashSet<&str> = resumed
                .iter()
                .flat_map(|j| j.items.values().map(String::as_str))
                .collect();
            let to_send: Vec<(usize, Request)> = run
                .open
                .iter()
                .filter(|(i, _)| !in_resumed.contains(items[**i].key.as_str()))
                .map(|(i, r)| (*i, r.clone()))
                .collect();
            let resumed_count = run.open.len() - to_send.len();
            // Each body's size, once: for the estimate and for cutting jobs within limits.
            let sizes: HashMap<usize, usize> = to_send
                .iter()
                .map(|(i, r)| (*i, self.body_bytes(r)))
                .collect();
            let est = estimate(
                round,
                &to_send,
                &sizes,
                if round == 1 { cached } else { 0 },
                resumed_count,
                price,
                run.spent,
                options.max_cost_usd,
            );
            on_event(BatchEvent::Estimate(est.clone()));
            let mut sending = to_send;
            if let (Some(budget), Some(cost), Some(so_far)) =
                (options.max_cost_usd, est.usd, run.spent)
                && so_far + cost > budget
                && !sending.is_empty()
            {
                for (i, _) in sending.drain(..) {
                    run.finish(
                        i,
                        Err(LlmError::OverBudget {
                            estimate_usd: cost,
                            spent_usd: so_far,
                            budget_usd: budget,
                        }),
                    );
                }
            }

            // Send: each job is journaled the moment the provider names it.
            let mut jobs: Vec<(Journal, bool)> = Vec::new();
            for j in resumed {
                on_event(BatchEvent::Submitted {
                    id: j.id.clone(),
                    requests: j.items.len(),
                    resumed: true,
                });
                jobs.push((j, true));
            }
            for chunk in self.chunks(&sending, &sizes, options) {
                let lines: Vec<(String, &Request)> =
                    chunk.iter().map(|(_, r)| (self.cache_key(r), r)).collect();
                match self.submit(&lines).await {
                    Ok(id) => {
                        let j = Journal {
                            version: 1,
                            provider: provider.to_owned(),
                            model: model.clone(),
                            id: id.clone(),
                            items: lines
                                .iter()
                                .zip(&chunk)
                                .map(|((cid, _), (i, _))| (cid.clone(), items[*i].key.clone()))
                                .collect(),
                        };
                        journal.write(&j).map_err(|e| LlmError::Cache {
                            path: journal.path(provider, &id),
                            message: format!(
                                "{e}; the {provider} batch {id} was sent and is not journaled: collect or cancel it by hand"
                            ),
                        })?;
                        on_event(BatchEvent::Submitted {
                            id,
                            requests: chunk.len(),
                            resumed: false,
                        });
                        jobs.push((j, false));
                    }
                    Err(e) if e.is_provider_failure() => {
                        // The job was refused as a whole: its requests fail with the reason.
                        for (i, _) in &chunk {
                            run.finish(*i, Err(e.clone()));
                        }
                    }
                    Err(e) => return Err(e),
                }
            }

            // Wait for every job of the round, then read its results.
            let started = Instant::now();
            let mut waiting = jobs;
            let mut ended: Vec<(Journal, bool, JobState)> = Vec::new();
            loop {
                let mut still = Vec::new();
                for (j, resumed) in waiting {
                    let state = match self.poll(&j.id).await {
                        Ok(state) => state,
                        // A job the provider no longer knows (another account, a purged job), or
                        // an earlier run's job that cannot be read: its requests go out again
                        // rather than block every later run.
                        Err(e) if resumed || matches!(e, LlmError::Http { status: 404, .. }) => {
                            JobState::Failed {
                                status: "unreadable".into(),
                                message: format!("the job could not be read: {e}"),
                                retry: true,
                            }
                        }
                        Err(e) => return Err(e),
                    };
                    match state {
                        JobState::Running {
                            status,
                            done,
                            total,
                        } => {
                            on_event(BatchEvent::Status {
                                id: j.id.clone(),
                                status,
                                done,
                                total,
                            });
                            still.push((j, resumed));
                        }
                        ended_state => {
                            let (status, done) = match &ended_state {
                                JobState::Ended { status, .. } => (status.clone(), j.items.len()),
                                JobState::Failed { status, .. } => (status.clone(), 0),
                                JobState::Running { .. } => unreachable!("matched above"),
                            };
                            on_event(BatchEvent::Status {
                                id: j.id.clone(),
                                status,
                                done: done as u64,
                                total: j.items.len() as u64,
                            });
                            ended.push((j, resumed, ended_state));
                        }
                    }
                }
                waiting = still;
                if waiting.is_empty() || started.elapsed() >= options.wait {
                    break;
                }
                tokio::time::sleep(options.poll).await;
            }
            for (j, resumed, state) in ended {
                self.settle(
                    &j, resumed, state, &items, &by_key, &mut run, &check, price, &journal,
                    on_event,
                )
                .await?;
            }
            if !waiting.is_empty() {
                // Left running at the provider, journaled: the next run collects them.
                for (j, _) in &waiting {
                    let err = LlmError::BatchPending {
                        provider,
                        id: j.id.clone(),
                        waited: started.elapsed(),
                        journal: journal.path(&j.provider, &j.id),
                    };
                    for key in j.items.values() {
                        if let Some(&i) = by_key.get(key.as_str())
                            && run.open.contains_key(&i)
                        {
                            run.finish(i, Err(err.clone()));
                        }
                    }
                }
                break;
            }
        }
        // What is still open after the last round: its last problem.
        let left: Vec<usize> = run.open.keys().copied().collect();
        for i in left {
            let e = run
                .last_error
                .remove(&i)
                .unwrap_or_else(|| LlmError::BatchItem {
                    provider,
                    id: "-".into(),
                    message: "no round answered this request".into(),
                });
            run.finish(i, Err(e));
        }
        Ok(slots.iter().map(|&s| take(&run.done, s)).collect())
    }

    /// Reads one ended job's results into the run: a valid answer is cached and done; a
    /// rejected one stays open with its retry request; an error is done, or stays open when
    /// worth another round. The journal goes once every request of the job is settled; a job
    /// that also answered requests this run did not ask keeps them journaled for the run that
    /// does.
    #[allow(clippy::too_many_arguments)]
    async fn settle<T, F>(
        &self,
        job: &Journal,
        resumed: bool,
        state: JobState,
        items: &[Item],
        by_key: &HashMap<String, usize>,
        run: &mut Run<T>,
        check: &F,
        price: Option<Price>,
        journal: &JournalDir,
        on_event: &(dyn Fn(BatchEvent) + Send + Sync),
    ) -> Result<(), LlmError>
    where
        T: serde::de::DeserializeOwned + Clone,
        F: Fn(&T) -> Result<(), String>,
    {
        let provider = self.config.provider.name();
        // The item a request id of this job answers, if that item is still open.
        let of = |cid: &str, open: &BTreeMap<usize, Request>| {
            job.items
                .get(cid)
                .and_then(|key| by_key.get(key.as_str()).copied())
                .filter(|i| open.contains_key(i))
        };
        let item_error = |message: String| LlmError::BatchItem {
            provider,
            id: job.id.clone(),
            message,
        };
        let results = match state {
            JobState::Ended { results, .. } => match self.results(&job.id, results).await {
                Ok(r) => Ok(r),
                Err(e) if resumed => Err((format!("its results could not be read: {e}"), true)),
                // This run's job: its journal stays, so the next run reads the results.
                Err(e) => return Err(e),
            },
            JobState::Failed { message, retry, .. } => Err((message, retry)),
            JobState::Running { .. } => Err(("the job had not ended".into(), true)),
        };
        let (mut valid, mut failed) = (0, 0);
        match results {
            Err((message, retry)) => {
                for cid in job.items.keys() {
                    if let Some(i) = of(cid, &run.open) {
                        failed += 1;
                        run.fail(i, item_error(message.clone()), retry);
                    }
                }
            }
            Ok((results, problems)) => {
                let mut seen = std::collections::HashSet::new();
                for (cid, result) in results {
                    let Some(i) = of(&cid, &run.open) else {
                        continue;
                    };
                    if !seen.insert(i) {
                        continue;
                    }
                    match result {
                        ItemResult::Answer(answer) => {
                            self.ledger
                                .record_batch(provider, &self.config.model, answer.usage);
                            if let (Some(s), Some(p)) = (run.spent.as_mut(), price) {
                                *s += p.cost(answer.usage, true);
                            }
                            let req = &items[i].request;
                            match accept::<T, F>(&answer, req.max_tokens, check) {
                                Ok(t) => {
                                    // Cached under the original request, as a call's answer is.
                                    self.remember(req, &answer)?;
                                    run.finish(i, Ok(t));
                                    valid += 1;
                                }
                                Err(problem) => {
                                    failed += 1;
                                    run.last_error.insert(
                                        i,
                                        LlmError::InvalidOutput {
                                            attempts: 1,
                                            problem: problem.clone(),
                                            excerpt: answer.text.chars().take(200).collect(),
                                        },
                                    );
                                    run.open.insert(i, retry_request(req, &problem));
                                }
                            }
                        }
                        ItemResult::Error { message, retry } => {
                            failed += 1;
                            run.fail(i, item_error(message), retry);
                        }
                    }
                }
                // A request the results leave out is still open: it goes out again.
                for cid in job.items.keys() {
                    if let Some(i) = of(cid, &run.open)
                        && !seen.contains(&i)
                    {
                        failed += 1;
                        let why = match problems.as_slice() {
                            [] => String::new(),
                            [one] => format!(" (one entry of them could not be read: {one})"),
                            [first, rest @ ..] => format!(
                                " ({} entries of them could not be read; the first: {first})",
                                rest.len() + 1
                            ),
                        };
                        run.last_error.entry(i).or_insert_with(|| {
                            item_error(format!(
                                "the job's results hold no answer for this request{why}"
                            ))
                        });
                    }
                }
            }
        }
        on_event(BatchEvent::Ended {
            id: job.id.clone(),
            valid,
            failed,
        });
        // Requests of the job this run did not ask stay journaled for a run that does.
        let others: BTreeMap<String, String> = job
            .items
            .iter()
            .filter(|(_, key)| !by_key.contains_key(key.as_str()))
            .map(|(c, k)| (c.clone(), k.clone()))
            .collect();
        if others.is_empty() {
            journal.remove(job);
        } else {
            journal.write(&Journal {
                items: others,
                ..job.clone()
            })?;
        }
        Ok(())
    }

    /// The round's requests in jobs within the provider's limits: requests a job, and bytes
    /// (OpenAI 200 MB a file, Anthropic 256 MB a batch, Gemini 20 MB an inline request; each
    /// kept under, counting each request's body as it is sent).
    fn chunks<'a>(
        &self,
        sending: &'a [(usize, Request)],
        sizes: &HashMap<usize, usize>,
        options: &BatchOptions,
    ) -> Vec<Vec<&'a (usize, Request)>> {
        let (max_requests, max_bytes) = match self.config.provider {
            Provider::OpenAi { .. } | Provider::OpenAiResponses { .. } => (50_000, 190_000_000),
            Provider::Anthropic { .. } => (100_000, 240_000_000),
            _ => (usize::MAX, 18_000_000),
        };
        let max_requests = options
            .max_requests_per_job
            .unwrap_or(max_requests)
            .min(max_requests);
        let mut out: Vec<Vec<&(usize, Request)>> = Vec::new();
        let mut bytes = 0;
        for item in sending {
            // The body, its id (64) and the line's envelope.
            let size = sizes[&item.0] + 256;
            let full = out
                .last()
                .is_none_or(|c| c.len() >= max_requests || bytes + size > max_bytes);
            if full {
                out.push(Vec::new());
                bytes = 0;
            }
            bytes += size;
            if let Some(c) = out.last_mut() {
                c.push(item);
            }
        }
        out
    }

    /// The bytes of the body one request is sent as.
    fn body_bytes(&self, req: &Request) -> usize {
        self.config
            .provider
            .body(&self.config.model, req)
            .to_string()
            .len()
    }

    /// Creates one job of `lines` (request id, request); its id.
    async fn submit(&self, lines: &[(String, &Request)]) -> Result<String, LlmError> {
        let p = &self.config.provider;
        let model = &self.config.model;
        match p {
            Provider::OpenAi { base_url, .. } | Provider::OpenAiResponses { base_url, .. } => {
                let url = if matches!(p, Provider::OpenAi { .. }) {
                    "/v1/chat/completions"
                } else {
                    "/v1/responses"
                };
                let mut jsonl = String::new();
                for (cid, req) in lines {
                    let line = json!({"custom_id": cid, "method": "POST", "url": url, "body": p.body(model, req)});
                    jsonl.push_str(&line.to_string());
                    jsonl.push('\n');
                }
                let (content_type, form) = multipart(&[
                    Part::Text("purpose", "batch"),
                    Part::File("file", "batch.jsonl", "application/jsonl", jsonl.as_bytes()),
                ]);
                // An upload may be retried (a file no batch uses costs nothing); it gets the
                // time a large file needs.
                let file = self
                    .http_json(
                        reqwest::Method::POST,
                        &format!("{base_url}/files"),
                        Some((content_type, form)),
                        Retry::Yes {
                            at_least: Duration::from_secs(600),
                        },
                    )
                    .await?;
                let file_id = str_at(p.name(), &file, "/id")?;
                let batch = self
                    .http_json(
                        reqwest::Method::POST,
                        &format!("{base_url}/batches"),
                        Some(json_body(&json!({
                            "input_file_id": file_id,
                            "endpoint": url,
                            "completion_window": "24h",
                            "metadata": {"agent_seer": "batch"},
                        }))),
                        Retry::OnlyRateLimited,
                    )
                    .await?;
                valid_id(p.name(), str_at(p.name(), &batch, "/id")?)
            }
            Provider::Anthropic { base_url, .. } => {
                let requests: Vec<Value> = lines
                    .iter()
                    .map(|(cid, req)| json!({"custom_id": cid, "params": p.body(model, req)}))
                    .collect();
                let batch = self
                    .http_json(
                        reqwest::Method::POST,
                        &format!("{base_url}/v1/messages/batches"),
                        Some(json_body(&json!({"requests": requests}))),
                        Retry::OnlyRateLimited,
                    )
                    .await?;
                valid_id(p.name(), str_at(p.name(), &batch, "/id")?)
            }
            Provider::Gemini { base_url, .. } => {
                let requests: Vec<Value> = lines
                    .iter()
                    .map(|(cid, req)| json!({"request": p.body(model, req), "metadata": {"key": cid}}))
                    .collect();
                let op = self
                    .http_json(
                        reqwest::Method::POST,
                        &format!("{base_url}/v1beta/models/{model}:batchGenerateContent"),
                        Some(json_body(&json!({"batch": {
                            "displayName": "agent-seer",
                            "inputConfig": {"requests": {"requests": requests}},
                        }}))),
                        Retry::OnlyRateLimited,
                    )
                    .await?;
                valid_id(p.name(), str_at(p.name(), &op, "/name")?)
            }
            Provider::Vertex { .. } => Err(LlmError::Config("vertex: no batch API here".into())),
        }
    }

    /// One look at a job.
    async fn poll(&self, id: &str) -> Result<JobState, LlmError> {
        let p = &self.config.provider;
        let name = p.name();
        // Counts are numbers, or (Gemini's int64 in JSON) strings of digits.
        let n = |v: &Value, ptr: &str| {
            v.pointer(ptr)
                .and_then(|c| c.as_u64().or_else(|| c.as_str()?.parse().ok()))
                .unwrap_or(0)
        };
        let s = |v: &Value, ptr: &str| {
            v.pointer(ptr)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        match p {
            Provider::OpenAi { base_url, .. } | Provider::OpenAiResponses { base_url, .. } => {
                let b = self
                    .http_json(
                        reqwest::Method::GET,
                        &format!("{base_url}/batches/{}", valid_id(name, id.to_owned())?),
                        None,
                        Retry::Yes {
                            at_least: Duration::ZERO,
                        },
                    )
                    .await?;
                let status = s(&b, "/status");
                let files = || Results::Files {
                    output: b
                        .get("output_file_id")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                    errors: b
                        .get("error_file_id")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                };
                Ok(match status.as_str() {
                    "validating" | "in_progress" | "finalizing" | "cancelling" => {
                        JobState::Running {
                            done: n(&b, "/request_counts/completed")
                                + n(&b, "/request_counts/failed"),
                            total: n(&b, "/request_counts/total"),
                            status,
                        }
                    }
                    // An expired or cancelled job's finished requests are in its output file and
                    // are paid for; the rest are in the error file (`batch_expired` ones go out
                    // again, cancelled ones do not).
                    "completed" | "expired" | "cancelled" => JobState::Ended {
                        results: files(),
                        status,
                    },
                    "failed" => {
                        let why: Vec<String> = b
                            .pointer("/errors/data")
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten()
                            .map(|e| {
                                let line = e
                                    .get("line")
                                    .and_then(Value::as_u64)
                                    .map(|l| format!(" (line {l})"))
                                    .unwrap_or_default();
                                format!("{}{line}: {}", s(e, "/code"), s(e, "/message"))
                            })
                            .collect();
                        JobState::Failed {
                            message: format!(
                                "the job failed validation: {}",
                                if why.is_empty() {
                                    "no reason given".to_owned()
                                } else {
                                    why.join("; ")
                                }
                            ),
                            retry: false,
                            status,
                        }
                    }
                    other => {
                        return Err(malformed(
                            name,
                            &format!("batch {id} has the unknown status {other:?}"),
                        ));
                    }
                })
            }
            Provider::Anthropic { base_url, .. } => {
                let b = self
                    .http_json(
                        reqwest::Method::GET,
                        &format!(
                            "{base_url}/v1/messages/batches/{}",
                            valid_id(name, id.to_owned())?
                        ),
                        None,
                        Retry::Yes {
                            at_least: Duration::ZERO,
                        },
                    )
                    .await?;
                let status = s(&b, "/processing_status");
                let total = ["processing", "succeeded", "errored", "canceled", "expired"]
                    .iter()
                    .map(|k| n(&b, &format!("/request_counts/{k}")))
                    .sum::<u64>();
                Ok(match status.as_str() {
                    "in_progress" | "canceling" => JobState::Running {
                        done: total - n(&b, "/request_counts/processing"),
                        total,
                        status,
                    },
                    "ended" => JobState::Ended {
                        results: Results::Anthropic { id: id.to_owned() },
                        status,
                    },
                    other => {
                        return Err(malformed(
                            name,
                            &format!("batch {id} has the unknown processing_status {other:?}"),
                        ));
                    }
                })
            }
            Provider::Gemini { base_url, .. } => {
                let op = self
                    .http_json(
                        reqwest::Method::GET,
                        &format!("{base_url}/v1beta/{}", valid_id(name, id.to_owned())?),
                        None,
                        Retry::Yes {
                            at_least: Duration::ZERO,
                        },
                    )
                    .await?;
                let status = s(&op, "/metadata/state");
                let total = n(&op, "/metadata/batchStats/requestCount");
                let done = n(&op, "/metadata/batchStats/successfulRequestCount")
                    + n(&op, "/metadata/batchStats/failedRequestCount");
                // A google.rpc.Status: `code` and `message`.
                let error = op.get("error").filter(|e| !e.is_null()).map(|e| {
                    format!(
                        "{} (google.rpc code {})",
                        e.get("message")
                            .and_then(Value::as_str)
                            .unwrap_or("no message"),
                        n(e, "/code")
                    )
                });
                let output = op
                    .pointer("/metadata/output")
                    .or_else(|| op.get("response"))
                    .filter(|o| !o.is_null())
                    .cloned();
                Ok(match status.as_str() {
                    "BATCH_STATE_PENDING" | "BATCH_STATE_RUNNING" | "BATCH_STATE_UNSPECIFIED" => {
                        JobState::Running {
                            status,
                            done,
                            total,
                        }
                    }
                    "BATCH_STATE_SUCCEEDED" => match output {
                        Some(o) => JobState::Ended {
                            results: Results::Inline(o),
                            status,
                        },
                        None => {
                            return Err(malformed(
                                name,
                                &format!("batch {id} succeeded with no metadata.output"),
                            ));
                        }
                    },
                    // An expired job ran out of its 48 hours: whatever it answered is read, the
                    // rest goes out again.
                    "BATCH_STATE_EXPIRED" => match output {
                        Some(o) => JobState::Ended {
                            results: Results::Inline(o),
                            status,
                        },
                        None => JobState::Failed {
                            message: "the job expired before it ran".into(),
                            retry: true,
                            status,
                        },
                    },
                    "BATCH_STATE_FAILED" | "BATCH_STATE_CANCELLED" => JobState::Failed {
                        message: format!(
                            "the job ended {status}{}",
                            error.map(|e| format!(": {e}")).unwrap_or_default()
                        ),
                        retry: false,
                        status,
                    },
                    other => {
                        return Err(malformed(
                            name,
                            &format!("batch {id} has the unknown state {other:?}"),
                        ));
                    }
                })
            }
            Provider::Vertex { .. } => Err(LlmError::Config("vertex: no batch API here".into())),
        }
    }

    /// An ended job's results: (request id, outcome) in the order the provider gives them,
    /// and what could not be read. A line that is not JSON or names no request is one
    /// problem, not the job's end: the other answers are kept (they are paid for), and only
    /// the requests left without an answer go out again (issue 32, item 8).
    async fn results(
        &self,
        id: &str,
        results: Results,
    ) -> Result<(Vec<(String, ItemResult)>, Vec<String>), LlmError> {
        let p = &self.config.provider;
        let name = p.name();
        let mut out = Vec::new();
        let mut problems: Vec<String> = Vec::new();
        // A line's problem, redacted like everything the provider sent.
        let mut unread =
            |e: LlmError| problems.push(self.secrets.redact(&e.to_string()).into_owned());
        match results {
            Results::Files { output, errors } => {
                let (Provider::OpenAi { base_url, .. }
                | Provider::OpenAiResponses { base_url, .. }) = p
                else {
                    return Err(LlmError::Config(
                        "files from a provider without them".into(),
                    ));
                };
                for file in output.iter().chain(&errors) {
                    let text = self
                        .http_get(&format!(
                            "{base_url}/files/{}/content",
                            valid_id(name, file.clone())?
                        ))
                        .await?;
                    for (n, line) in text
                        .lines()
                        .enumerate()
                        .filter(|(_, l)| !l.trim().is_empty())
                    {
                        let read = self
                            .parse_line(line, file, n)
                            .and_then(|v| Ok((str_at(name, &v, "/custom_id")?, v)));
                        let Ok((cid, v)) = read.map_err(&mut unread) else {
                            continue;
                        };
                        let status = v.pointer("/response/status_code").and_then(Value::as_u64);
                        let result = match (status, v.pointer("/response/body")) {
                            (Some(200), Some(body)) => match p.parse(body) {
                                Ok(a) => ItemResult::Answer(a),
                                Err(e) => ItemResult::Error {
                                    message: e.to_string(),
                                    retry: false,
                                },
                            },
                            (Some(code), body) => ItemResult::Error {
                                message: format!(
                                    "HTTP {code}: {}",
                                    body.and_then(|b| b.pointer("/error/message"))
                                        .and_then(Value::as_str)
                                        .unwrap_or("no message")
                                ),
                                retry: code == 429 || code >= 500,
                            },
                            (None, _) => {
                                let code = v
                                    .pointer("/error/code")
                                    .and_then(Value::as_str)
                                    .unwrap_or("error");
                                let msg = v
                                    .pointer("/error/message")
                                    .and_then(Value::as_str)
                                    .unwrap_or("no message");
                                ItemResult::Error {
                                    message: format!("{code}: {msg}"),
                                    retry: code == "batch_expired",
                                }
                            }
                        };
                        out.push((cid, result));
                    }
                }
            }
            Results::Anthropic { id: batch } => {
                let Provider::Anthropic { base_url, .. } = p else {
                    return Err(LlmError::Config("an Anthropic batch elsewhere".into()));
                };
                let text = self
                    .http_get(&format!(
                        "{base_url}/v1/messages/batches/{}/results",
                        valid_id(name, batch.clone())?
                    ))
                    .await?;
                for (n, line) in text
                    .lines()
                    .enumerate()
                    .filter(|(_, l)| !l.trim().is_empty())
                {
                    let read = self
                        .parse_line(line, &batch, n)
                        .and_then(|v| Ok((str_at(name, &v, "/custom_id")?, v)));
                    let Ok((cid, v)) = read.map_err(&mut unread) else {
                        continue;
                    };
                    let kind = v
                        .pointer("/result/type")
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    let result = match kind {
                        "succeeded" => match v.pointer("/result/message").map(|m| p.parse(m)) {
                            Some(Ok(a)) => ItemResult::Answer(a),
                            Some(Err(e)) => ItemResult::Error {
                                message: e.to_string(),
                                retry: false,
                            },
                            None => ItemResult::Error {
                                message: "succeeded without a message".into(),
                                retry: false,
                            },
                        },
                        "errored" => {
                            let t = v
                                .pointer("/result/error/error/type")
                                .and_then(Value::as_str)
                                .unwrap_or("error");
                            let m = v
                                .pointer("/result/error/error/message")
                                .and_then(Value::as_str)
                                .unwrap_or("no message");
                            ItemResult::Error {
                                message: format!("{t}: {m}"),
                                retry: matches!(
                                    t,
                                    "api_error" | "overloaded_error" | "rate_limit_error"
                                ),
                            }
                        }
                        "expired" => ItemResult::Error {
                            message: "expired: the batch ended before this request ran".into(),
                            retry: true,
                        },
                        "canceled" => ItemResult::Error {
                            message: "canceled: the batch was canceled before this request ran"
                                .into(),
                            retry: false,
                        },
                        other => ItemResult::Error {
                            message: format!("unknown result type {other:?}"),
                            retry: false,
                        },
                    };
                    out.push((cid, result));
                }
            }
            Results::Inline(o) => {
                if let Some(file) = o.get("responsesFile").and_then(Value::as_str) {
                    return Err(malformed(
                        name,
                        &format!(
                            "batch {id} wrote its answers to the file {file}; agent-seer sends requests inline and reads answers inline"
                        ),
                    ));
                }
                let list = o
                    .pointer("/inlinedResponses/inlinedResponses")
                    .and_then(Value::as_array)
                    .ok_or_else(|| {
                        malformed(
                            name,
                            &format!("batch {id}: no inlinedResponses.inlinedResponses"),
                        )
                    })?;
                for r in list {
                    let Ok(cid) = str_at(name, r, "/metadata/key").map_err(&mut unread) else {
                        continue;
                    };
                    let result = match (r.get("response"), r.get("error")) {
                        (Some(resp), _) => match p.parse(resp) {
                            Ok(a) => ItemResult::Answer(a),
                            Err(e) => ItemResult::Error {
                                message: e.to_string(),
                                retry: false,
                            },
                        },
                        (None, Some(e)) => {
                            let code = e.get("code").and_then(Value::as_u64).unwrap_or(0);
                            ItemResult::Error {
                                message: format!(
                                    "{} {}",
                                    code,
                                    e.get("message")
                                        .and_then(Value::as_str)
                                        .unwrap_or("no message")
                                ),
                                // google.rpc codes: DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, INTERNAL,
                                // UNAVAILABLE (or their HTTP statuses) are worth another round.
                                retry: matches!(code, 4 | 8 | 13 | 14 | 429 | 500..=599),
                            }
                        }
                        (None, None) => ItemResult::Error {
                            message: "neither a response nor an error".into(),
                            retry: false,
                        },
                    };
                    out.push((cid, result));
                }
            }
        }
        // A key the provider echoes is gone from every answer before it is validated or cached.
        for (_, r) in &mut out {
            match r {
                ItemResult::Answer(a) => self.secrets.redact_in_place(&mut a.text),
                ItemResult::Error { message, .. } => self.secrets.redact_in_place(message),
            }
        }
        Ok((out, problems))
    }

    fn parse_line(&self, line: &str, file: &str, n: usize) -> Result<Value, LlmError> {
        let name = self.config.provider.name();
        let mut v: Value = serde_json::from_str(line).map_err(|e| {
            malformed(
                name,
                &format!(
                    "line {} of the results of {file} is not JSON ({e}): {}",
                    n + 1,
                    excerpt(&self.secrets.redact(line))
                ),
            )
        })?;
        self.secrets.redact_json(&mut v);
        Ok(v)
    }

    /// A request to the provider under the concurrency cap; its JSON answer.
    async fn http_json(
        &self,
        method: reqwest::Method,
        url: &str,
        body: Option<(String, Vec<u8>)>,
        retry: Retry,
    ) -> Result<Value, LlmError> {
        let name = self.config.provider.name();
        let text = self.http(method, url, body, retry).await?;
        let mut v: Value = serde_json::from_str(&text)
            .map_err(|e| malformed(name, &format!("{url}: not JSON ({e}): {}", excerpt(&text))))?;
        self.secrets.redact_json(&mut v);
        Ok(v)
    }

    /// A GET; its text.
    async fn http_get(&self, url: &str) -> Result<String, LlmError> {
        self.http(
            reqwest::Method::GET,
            url,
            None,
            Retry::Yes {
                at_least: Duration::ZERO,
            },
        )
        .await
    }

    async fn http(
        &self,
        method: reqwest::Method,
        url: &str,
        body: Option<(String, Vec<u8>)>,
        retry: Retry,
    ) -> Result<String, LlmError> {
        let p = &self.config.provider;
        let name = p.name();
        let timeout = match retry {
            Retry::Yes { at_least } => self.config.timeout.max(at_least),
            Retry::OnlyRateLimited => self.config.timeout,
        };
        let mut budget = self.budget();
        self.retrying(&mut budget, || {
            let mut rb = self.http.request(method.clone(), url).timeout(timeout);
            for (k, v) in p.headers() {
                rb = rb.header(k, v);
            }
            if let Some((content_type, bytes)) = &body {
                rb = rb
                    .header("content-type", content_type.as_str())
                    .body(bytes.clone());
            }
            async move {
                let sent = send(rb, name, timeout, &self.secrets).await;
                match (retry, sent) {
                    // A job is created once: after a timeout, a dropped connection or a 5xx the
                    // provider may have made it, and a second one would be paid twice. Only a
                    // 429 (refused, nothing made) is asked again.
                    (Retry::OnlyRateLimited, Err(e))
                        if e.is_retryable() && !matches!(e, LlmError::Http { status: 429, .. }) =>
                    {
                        Err(LlmError::BatchItem {
                            provider: name,
                            id: "-".into(),
                            message: format!(
                                "creating the job failed ({e}); it was not asked again, since the provider may have made it: look for it in the provider's console before running again"
                            ),
                        })
                    }
                    (_, sent) => sent,
                }
            }
        })
        .await
    }
}

/// Whether a request may be asked again.
#[derive(Clone, Copy)]
enum Retry {
    /// On 429, 5xx, timeouts and dropped connections, with a request timeout of at least this.
    Yes { at_least: Duration },
    /// Only on 429: creating a job.
    OnlyRateLimited,
}

fn take<T: Clone>(done: &[Option<Result<T, LlmError>>], slot: usize) -> Result<T, LlmError> {
    match &done[slot] {
        Some(r) => r.clone(),
        None => Err(LlmError::Config(
            "the batch ended without an answer for this request".into(),
        )),
    }
}

/// What a provider counts of one request, at most: the bytes of its body (the prompt, the
/// schema or forced tool, the envelope) at one token per two bytes, plus the tokens a provider
/// adds on its side (Anthropic's tool-use system prompt is some 300). English and JSON take
/// one token per three to four bytes and CJK text about one per three bytes, so this errs
/// high.
const TOKENS_ADDED_PER_REQUEST: u64 = 350;

/// The estimate of one round: prompt tokens from [`TOKENS_ADDED_PER_REQUEST`] and the body's
/// bytes, answer tokens at their limit.
#[allow(clippy::too_many_arguments)]
fn estimate(
    round: u32,
    to_send: &[(usize, Request)],
    sizes: &HashMap<usize, usize>,
    cached: usize,
    resumed: usize,
    price: Option<Price>,
    spent: Option<f64>,
    budget: Option<f64>,
) -> Estimate {
    let input_tokens: u64 = to_send
        .iter()
        .map(|(i, _)| sizes[i].div_ceil(2) as u64 + TOKENS_ADDED_PER_REQUEST)
        .sum();
    let output_tokens: u64 = to_send.iter().map(|(_, r)| u64::from(r.max_tokens)).sum();
    Estimate {
        round,
        requests: to_send.len(),
        cached,
        resumed,
        input_tokens,
        output_tokens,
        usd: price.map(|p| {
            p.cost(
                super::Usage {
                    input_tokens,
                    output_tokens,
                },
                true,
            )
        }),
        spent_usd: spent,
        budget_usd: budget,
    }
}

fn str_at(provider: &'static str, v: &Value, ptr: &str) -> Result<String, LlmError> {
    v.pointer(ptr)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| {
            malformed(
                provider,
                &format!("no {} in {}", &ptr[1..], excerpt(&v.to_string())),
            )
        })
}

/// A provider's id of a job or file as it may go into a URL or a file name: letters, digits,
/// `_` and `-` (OpenAI's `batch_…` and `file-…`, Anthropic's `msgbatch_…`), and for Gemini one
/// `batches/` before them. Anything else (a `..`, a `/`, a `?`) is refused, never encoded.
fn valid_id(provider: &'static str, id: String) -> Result<String, LlmError> {
    let plain = |s: &str| {
        !s.is_empty()
            && s.len() <= 200
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
    };
    let ok = match provider {
        "gemini" => id.strip_prefix("batches/").is_some_and(plain),
        _ => plain(&id),
    };
    if ok {
        Ok(id)
    } else {
        Err(malformed(
            provider,
            &format!(
                "the provider named a job or file {id:?}, which is no id agent-seer will put in a URL"
            ),
        ))
    }
}

fn json_body(v: &Value) -> (String, Vec<u8>) {
    ("application/json".to_owned(), v.to_string().into_bytes())
}

enum Part<'a> {
    Text(&'a str, &'a str),
    File(&'a str, &'a str, &'a str, &'a [u8]),
}

/// A `multipart/form-data` body (RFC 7578) and its content type, with a boundary that occurs
/// in none of the parts.
fn multipart(parts: &[Part<'_>]) -> (String, Vec<u8>) {
    let contains = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).any(|w| w == needle);
    let mut n: u64 = 0x5eed_a6e7;
    let boundary = loop {
        let b = format!("agent-seer-{n:016x}");
        let clash = parts.iter().any(|p| match p {
            Part::Text(_, v) => v.contains(&b),
            Part::File(_, _, _, data) => contains(data, b.as_bytes()),
        });
        if !clash {
            break b;
        }
        n = n
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
    };
    let mut body = Vec::new();
    for p in parts {
        body.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
        match p {
            Part::Text(name, value) => {
                body.extend_from_slice(
                    format!("Content-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n")
                        .as_bytes(),
                );
            }
            Part::File(name, filename, content_type, data) => {
                body.extend_from_slice(
                    format!(
                        "Content-Disposition: form-data; name=\"{name}\"; filename=\"{filename}\"\r\nContent-Type: {content_type}\r\n\r\n"
                    )
                    .as_bytes(),
                );
                body.extend_from_slice(data);
                body.extend_from_slice(b"\r\n");
            }
        }
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

/// The longest id a journal's file name spells out whole.
const JOURNAL_NAME: usize = 120;

/// The journal of jobs sent and not yet read: `<cache>/batches/<provider>-<id>.json`.
struct JournalDir {
    dir: PathBuf,
}

impl JournalDir {
    fn new(cache_dir: &Path) -> Self {
        Self {
            dir: cache_dir.join("batches"),
        }
    }

    /// The file of a job; the provider's id made a file name (nothing but `[A-Za-z0-9_-]`).
    /// An id longer than [`JOURNAL_NAME`] characters keeps its first 100 and a digest of the
    /// whole, so two ids with one long prefix keep two journals (issue 32, item 8).
    fn path(&self, provider: &str, id: &str) -> PathBuf {
        let safe: String = id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let safe = if safe.len() > JOURNAL_NAME {
            use sha2::Digest;
            let digest = sha2::Sha256::digest(id.as_bytes());
            let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
            format!("{}-{hex}", &safe[..100])
        } else {
            safe
        };
        self.dir.join(format!("{provider}-{safe}.json"))
    }

    fn write(&self, j: &Journal) -> Result<(), LlmError> {
        let text = serde_json::to_string_pretty(j).unwrap_or_default();
        super::cache::write_atomically(&self.path(&j.provider, &j.id), &text)
    }

    fn remove(&self, j: &Journal) {
        let _ = std::fs::remove_file(self.path(&j.provider, &j.id));
    }

    /// The jobs an earlier run of this provider and model left, oldest name first; a file
    /// that is not a journal is left alone.
    fn pending(&self, provider: &'static str, model: &str) -> Vec<Journal> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        paths.sort();
        paths
            .into_iter()
            .filter_map(|p| std::fs::read_to_string(p).ok())
            .filter_map(|t| serde_json::from_str::<Journal>(&t).ok())
            .filter(|j| j.version == 1 && j.provider == provider && j.model == model)
            .filter(|j| valid_id(provider, j.id.clone()).is_ok())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multipart_boundaries_avoid_the_data() {
        let data = b"{\"a\": 1}\n--agent-seer-000000005eeda6e7\n";
        let (ct, body) = multipart(&[
            Part::Text("purpose", "batch"),
            Part::File("file", "b.jsonl", "application/jsonl", data),
        ]);
        let boundary = ct.strip_prefix("multipart/form-data; boundary=").unwrap();
        assert_ne!(boundary, "agent-seer-000000005eeda6e7");
        let text = String::from_utf8(body).unwrap();
        assert!(text.starts_with(&format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n"
        )));
        assert!(text.ends_with(&format!("\r\n--{boundary}--\r\n")));
        assert_eq!(text.matches(boundary).count(), 3);
    }

    #[test]
    fn hostile_ids_stay_one_segment_and_one_file() {
        assert_eq!(
            valid_id("openai", "batch_abc-1".into()).unwrap(),
            "batch_abc-1"
        );
        assert_eq!(
            valid_id("gemini", "batches/abc".into()).unwrap(),
            "batches/abc"
        );
        for bad in ["..", "../../x?y", "batch/1", "", "batches/..", "a b", "é"] {
            assert!(valid_id("openai", bad.into()).is_err(), "{bad}");
        }
        for bad in ["batches/..", "batches/a/b", "abc", "batches/"] {
            assert!(valid_id("gemini", bad.into()).is_err(), "{bad}");
        }
        let j = JournalDir::new(Path::new("/c"));
        assert_eq!(
            j.path("openai", "../../etc/passwd"),
            PathBuf::from("/c/batches/openai-______etc_passwd.json")
        );
        assert_eq!(
            j.path("gemini", "batches/abc"),
            PathBuf::from("/c/batches/gemini-batches_abc.json")
        );
        // Two ids alike in their first 120 characters: two journals.
        let long = "b".repeat(120);
        let (a, b) = (
            j.path("openai", &format!("{long}-1")),
            j.path("openai", &format!("{long}-2")),
        );
        assert_ne!(a, b);
        assert!(a.file_name().unwrap().len() < 140, "{a:?}");
    }
}
