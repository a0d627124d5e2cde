#!/usr/bin/env Rscript
# Reference values from the R packages RRreg (Heck & Moshagen) and rr (Blair, Imai & Zhou)
# for deniable's survey tests. Run from the repository root:
#
#     Rscript tests/survey/reference/make_reference.R
#
# It writes tests/survey/reference/rrreg.json and the CSV datasets next to it. The test
# suite only reads those files; it never needs R. Every number below is what the packages
# return for the recorded call, on data simulated here with fixed seeds (or rr's Nigeria data).

suppressPackageStartupMessages({
  library(RRreg)
  library(rr)
  library(jsonlite)
  library(numDeriv)
})

out_dir <- file.path("tests", "survey", "reference")
if (!dir.exists(out_dir)) stop("run from the repository root: ", out_dir, " not found")
RNGkind("Mersenne-Twister", "Inversion", "Rejection")

# ---------------------------------------------------------------------------------------
# building blocks used below

# Evaluate an expression in the caller and keep its source text as the "call" on record.
recorded <- function(expr) {
  code <- paste(trimws(deparse(substitute(expr), width.cutoff = 500L)), collapse = " ")
  list(value = eval.parent(substitute(expr)), call = code)
}

named <- function(x) as.list(x)          # named vector -> JSON object
arr <- function(x) I(as.vector(x))       # always a JSON array, even of length 1

matrix_rows <- function(m) lapply(seq_len(nrow(m)), function(i) arr(unname(m[i, ])))

# Numbers as they are written in a call: short decimals as such, thirds/sixths/twelfths as fractions.
num_text <- function(v) {
  paste(vapply(v, function(z) {
    txt <- format(z, digits = 15)
    if (nchar(txt) > 8) {
      fr <- as.character(MASS::fractions(z))
      if (nchar(fr) <= 6) txt <- fr
    }
    txt
  }, ""), collapse = ", ")
}

num_or_null <- function(x) if (is.null(x) || length(x) == 0) NULL else x

# Bernoulli/categorical log-likelihood (no multinomial constant) of the responses at a
# parameter vector, built from getPW: sum over respondents of log P_g(r | state mixture).
# `state` is the vector of latent-class probabilities in getPW's column order.
design_loglik <- function(model, p, response, group, state, par2 = NULL, Kukrep = 1) {
  if (is.null(group)) group <- rep(1, length(response))
  ll <- 0
  for (g in sort(unique(group))) {
    P <- getPW(model, p, group = g, par2 = par2, Kukrep = Kukrep)
    prob <- as.vector(P %*% state)
    r <- response[group == g]
    ll <- ll + sum(log(prob[r + 1]))
  }
  ll
}

# Latent-state vector (getPW column order) at an RRuni fit.
uni_state <- function(model, fit) {
  switch(model,
    "FR" = fit$pi,
    "CDM" = c(fit$pi, fit$beta, fit$gamma),      # columns: carrier "1", non-carrier "0", cheater
    "CDMsym" = c(fit$pi, fit$beta, fit$gamma),
    c(1 - fit$pi, fit$pi)                        # columns: "0" (non-carrier), "1" (carrier)
  )
}

uni_par2 <- function(model, fit) {
  switch(model, "SLD" = fit$t, "UQTunknown" = fit$piUQ, NULL)
}

uni_fit_record <- function(model, fit, p, response, group, Kukrep) {
  tab <- summary(fit)$coefficients
  rec <- list(
    pi = arr(fit$pi), piSE = arr(fit$piSE),
    n = arr(fit$n),
    logLik_RRuni = num_or_null(fit$logLik),
    summary_rows = arr(rownames(tab)),
    summary_estimate = arr(unname(tab[, 1])),
    summary_se = arr(unname(tab[, 2]))
  )
  for (nm in c("t", "tSE", "piUQ", "piUQSE", "beta", "betaSE", "gamma", "gammaSE")) {
    if (!is.null(fit[[nm]])) rec[[nm]] <- fit[[nm]]
  }
  rec$loglik_bernoulli <- design_loglik(model, p, response, group, uni_state(model, fit),
                                        par2 = uni_par2(model, fit), Kukrep = Kukrep)
  rec
}

json_out <- list()

# ---------------------------------------------------------------------------------------
# meta

json_out$meta <- list(
  generated_by = "Rscript tests/survey/reference/make_reference.R",
  date_utc = format(Sys.time(), "%Y-%m-%d %H:%M:%S", tz = "UTC"),
  R_version = R.version.string,
  packages = list(
    RRreg = as.character(packageVersion("RRreg")),
    rr = as.character(packageVersion("rr")),
    jsonlite = as.character(packageVersion("jsonlite")),
    numDeriv = as.character(packageVersion("numDeriv")),
    lme4 = as.character(packageVersion("lme4"))
  ),
  RNGkind = arr(RNGkind()),
  platform = R.version$platform,
  conventions = paste(
    "Responses are 0/1 (FR: 0..m-1, Kuk: number of red cards 0..Kukrep).",
    "Numbers are written with 15 significant digits (jsonlite), so 1/6 reads back as 0.166666666666667.",
    "getPW matrices are stored as rows (row = response, column = true state, dimnames kept).",
    "RRuni 'logLik_RRuni' is what RRuni returns (dmultinom per group, including the multinomial",
    "coefficient; see notes); 'loglik_bernoulli' is this script's sum of log P(response) at the",
    "estimate, without any constant."
  ),
  notes = arr(c(
    "RRuni evaluates logLik with par = res$pi only: for two-group models (SLD, UQTunknown) the extra parameter is then NA and RRuni.ll returns its penalty 1e6, for CDM/CDMsym the matrix product fails and logLik is NA, and for FR it builds the class vector as c(1 - sum(pi[1:(m-1)]), pi[1:(m-1)]), i.e. in the wrong order. Use loglik_bernoulli instead.",
    "RRuni falls back to ML (optim L-BFGS-B on [1e-8, 1 - 1e-8], SE from optim's numerical Hessian) only if a moment estimate is outside (0, 1); for two-group models the start of the extra parameter is runif(1), so the seed before RRuni is recorded.",
    "RRlog: coefficients and vcov are RRlog's own (optim L-BFGS-B, vcov = solve(-hessian) from optim's finite differences). 'polished' re-maximizes RRreg's own log-likelihood (RRreg:::RRlog_loglik) from RRlog's estimate with tight tolerances, and 'se_exact' is sqrt(diag(solve(-H))) with H = numDeriv::hessian at the polished optimum, i.e. the observed information to about 1e-7.",
    "RRgen assigns two-group designs by position: the first round(n * groupRatio) rows are group 1."
  ))
)

# ---------------------------------------------------------------------------------------
# (a1) misclassification matrices: getPW

pw_cases <- list(
  list(model = "Warner", p = 0.7),
  list(model = "Warner", p = 0.7, group = 0),
  list(model = "Crosswise", p = 0.25),
  list(model = "Triangular", p = 0.25),
  list(model = "Mangat", p = 0.8),
  list(model = "Kuk", p = c(0.7, 0.3)),
  list(model = "Kuk", p = c(0.6, 0.25)),
  list(model = "Kuk", p = c(0.7, 0.3), Kukrep = 3),
  list(model = "UQTknown", p = c(0.7, 1 / 12)),
  list(model = "UQTknown", p = c(0.6, 0.3)),
  list(model = "UQTunknown", p = c(0.7, 0.3), group = 1, par2 = 0.266),
  list(model = "UQTunknown", p = c(0.7, 0.3), group = 2, par2 = 0.266),
  list(model = "FR", p = c(1 / 6, 1 / 6)),
  list(model = "FR", p = c(0.1, 0.2)),
  list(model = "FR", p = c(0.1, 0.2, 0.15)),
  list(model = "FR", p = c(0.1, 0.2, 0.15), group = 0),
  list(model = "SLD", p = c(0.3, 0.7), group = 1, par2 = 0.85),
  list(model = "SLD", p = c(0.3, 0.7), group = 2, par2 = 0.85),
  list(model = "CDM", p = c(0.2, 0.6), group = 1),
  list(model = "CDM", p = c(0.2, 0.6), group = 2),
  list(model = "CDMsym", p = c(0.2, 0.3, 0.4, 0.1), group = 1),
  list(model = "CDMsym", p = c(0.2, 0.3, 0.4, 0.1), group = 2)
)

json_out$getPW <- lapply(pw_cases, function(cs) {
  group <- if (is.null(cs$group)) 1 else cs$group
  Kukrep <- if (is.null(cs$Kukrep)) 1 else cs$Kukrep
  m <- getPW(model = cs$model, p = cs$p, group = group, par2 = cs$par2, Kukrep = Kukrep)
  call <- sprintf(
    "getPW(model = \"%s\", p = c(%s), group = %d%s, Kukrep = %d)",
    cs$model, num_text(cs$p), group,
    if (is.null(cs$par2)) "" else sprintf(", par2 = %s", num_text(cs$par2)),
    Kukrep
  )
  list(
    model = cs$model, p = arr(cs$p), group = group, par2 = num_or_null(cs$par2),
    Kukrep = Kukrep, call = call,
    rownames = arr(rownames(m)), colnames = arr(colnames(m)),
    matrix = matrix_rows(m)
  )
})

# ---------------------------------------------------------------------------------------
# (a2) univariate estimates: RRuni on data simulated with RRgen

uni_cases <- list(
  list(name = "Warner", model = "Warner", p = 0.7, n = 1000, pi.true = 0.3),
  list(name = "UQTknown", model = "UQTknown", p = c(0.7, 1 / 12), n = 1000, pi.true = 0.3),
  list(name = "UQTunknown", model = "UQTunknown", p = c(0.8, 0.3), n = 1200,
       pi.true = c(0.3, 0.6), groupRatio = 0.5,
       truth_note = "piUQ (prevalence of the unrelated question) = 0.6"),
  list(name = "Mangat", model = "Mangat", p = 0.8, n = 1000, pi.true = 0.3),
  list(name = "Kuk", model = "Kuk", p = c(0.7, 0.3), n = 1000, pi.true = 0.3),
  list(name = "Kuk_rep3", model = "Kuk", p = c(0.7, 0.3), n = 800, pi.true = 0.3, Kukrep = 3),
  list(name = "FR2", model = "FR", p = c(0.1, 0.2), n = 1000, pi.true = c(0.7, 0.3)),
  list(name = "FR2_nigeria_p", model = "FR", p = c(1 / 6, 1 / 6), n = 1000, pi.true = c(0.75, 0.25)),
  list(name = "FR3", model = "FR", p = c(0.1, 0.2, 0.15), n = 1200, pi.true = c(0.5, 0.3, 0.2)),
  list(name = "Crosswise", model = "Crosswise", p = 0.25, n = 1000, pi.true = 0.3),
  list(name = "Triangular", model = "Triangular", p = 0.25, n = 1000, pi.true = 0.3),
  list(name = "CDM", model = "CDM", p = c(0.2, 0.6), n = 1500, pi.true = 0.3,
       complyRates = c(0.9, 0.9), groupRatio = 0.5,
       truth_note = "gamma (cheaters) = 0.1; honest carriers pi = 0.3"),
  list(name = "CDMsym", model = "CDMsym", p = c(0.1, 0.2, 0.6, 0.1), n = 1500, pi.true = 0.3,
       complyRates = c(0.9, 0.9), groupRatio = 0.5,
       truth_note = "gamma (cheaters) = 0.1; honest carriers pi = 0.3"),
  list(name = "SLD", model = "SLD", p = c(0.3, 0.7), n = 1500, pi.true = 0.3,
       complyRates = c(0.85, 1), groupRatio = 0.4,
       truth_note = "t = 0.85 (carriers' compliance rate)")
)

# Cases where the moment estimate falls outside (0, 1), so RRuni falls back to ML: the
# first seed from 1 on whose RRgen data give an out-of-range moment estimate.
fallback_cases <- list(
  list(name = "Warner_ML_fallback", model = "Warner", p = 0.7, n = 200, pi.true = 0.02,
       out = function(f) f$pi),
  list(name = "FR2_ML_fallback", model = "FR", p = c(1 / 6, 1 / 6), n = 200, pi.true = c(0.99, 0.01),
       out = function(f) f$pi),
  list(name = "SLD_ML_fallback", model = "SLD", p = c(0.3, 0.7), n = 400, pi.true = 0.3,
       groupRatio = 0.5, out = function(f) c(f$pi, f$t),
       truth_note = "t = 1 (all carriers comply), so the moment t exceeds 1 about half the time"),
  list(name = "CDM_ML_fallback", model = "CDM", p = c(0.2, 0.6), n = 400, pi.true = 0.3,
       groupRatio = 0.5, out = function(f) c(f$pi, f$gamma),
       truth_note = "gamma = 0 (no cheaters), so the moment gamma is negative about half the time")
)

gen_data <- function(cs, seed) {
  set.seed(seed)
  RRgen(
    n = cs$n, pi.true = cs$pi.true, model = cs$model, p = cs$p,
    complyRates = if (is.null(cs$complyRates)) c(1, 1) else cs$complyRates,
    groupRatio = if (is.null(cs$groupRatio)) 0.5 else cs$groupRatio,
    Kukrep = if (is.null(cs$Kukrep)) 1 else cs$Kukrep
  )
}

run_uni <- function(cs, seed) {
  d <- gen_data(cs, seed)
  Kukrep <- if (is.null(cs$Kukrep)) 1 else cs$Kukrep
  group <- d$group
  moment <- RRuni(response = d$response, model = cs$model, p = cs$p, group = group,
                  MLest = FALSE, Kukrep = Kukrep)
  set.seed(seed + 100000)
  fit <- RRuni(response = d$response, model = cs$model, p = cs$p, group = group,
               Kukrep = Kukrep)
  gen_call <- sprintf(
    "set.seed(%d); d <- RRgen(n = %d, pi.true = c(%s), model = \"%s\", p = c(%s), complyRates = c(%s), groupRatio = %s, Kukrep = %d)",
    seed, cs$n, num_text(cs$pi.true), cs$model,
    num_text(cs$p),
    paste(if (is.null(cs$complyRates)) c(1, 1) else cs$complyRates, collapse = ", "),
    if (is.null(cs$groupRatio)) 0.5 else cs$groupRatio, Kukrep
  )
  fit_call <- sprintf(
    "set.seed(%d); RRuni(response = d$response, model = \"%s\", p = c(%s)%s, Kukrep = %d)",
    seed + 100000, cs$model, num_text(cs$p),
    if (is.null(group)) "" else ", group = d$group", Kukrep
  )
  list(
    name = cs$name, model = cs$model, p = arr(cs$p), Kukrep = Kukrep,
    n = length(d$response), pi_true = arr(cs$pi.true),
    complyRates = arr(if (is.null(cs$complyRates)) c(1, 1) else cs$complyRates),
    truth_note = num_or_null(cs$truth_note),
    seed = seed, gen_call = gen_call, call = fit_call,
    response = arr(as.integer(d$response)),
    group = if (is.null(group)) NULL else arr(as.integer(group)),
    true_state = arr(as.integer(d$true)),
    moment = uni_fit_record(cs$model, moment, cs$p, d$response, group, Kukrep),
    RRuni = uni_fit_record(cs$model, fit, cs$p, d$response, group, Kukrep),
    ml_fallback = !isTRUE(all.equal(c(moment$pi, uni_par2(cs$model, moment), moment$gamma),
                                    c(fit$pi, uni_par2(cs$model, fit), fit$gamma)))
  )
}

# This script's own constrained ML (not RRreg's): maximize loglik_bernoulli over the true
# parameter space with L-BFGS-B (factr = 1, pgtol = 0), for the fallback cases, so that the
# tests have a correct boundary MLE next to what RRuni returns.
constrained_ml <- function(model, p, response, group) {
  unpack <- switch(model,
    "Warner" = function(th) list(state = c(1 - th[1], th[1]), par2 = NULL,
                                 params = list(pi = th[1])),
    "FR" = function(th) list(state = c(1 - th[1], th[1]), par2 = NULL,
                             params = list(pi = th[1])),
    "SLD" = function(th) list(state = c(1 - th[1], th[1]), par2 = th[2],
                              params = list(pi = th[1], t = th[2])),
    "CDM" = function(th) {
      pi <- th[1]; gamma <- (1 - th[1]) * th[2]; beta <- 1 - pi - gamma
      list(state = c(pi, beta, gamma), par2 = NULL,
           params = list(pi = pi, beta = beta, gamma = gamma))
    }
  )
  k <- if (model %in% c("SLD", "CDM")) 2 else 1
  f <- function(th) {
    u <- unpack(th)
    ll <- design_loglik(model, p, response, group, u$state, par2 = u$par2)
    if (is.finite(ll)) ll else -1e10
  }
  best <- NULL
  for (start in list(rep(0.5, k), rep(0.2, k), rep(0.8, k))) {
    o <- optim(start, f, method = "L-BFGS-B", lower = rep(0, k), upper = rep(1, k),
               control = list(fnscale = -1, factr = 1, pgtol = 0, maxit = 10000))
    if (is.null(best) || o$value > best$value) best <- o
  }
  list(params = unpack(best$par)$params, loglik_bernoulli = best$value,
       method = "this script: optim L-BFGS-B on the parameter space (factr = 1, pgtol = 0), best of 3 starts; CDM as pi = a, gamma = (1 - a) b")
}

uni_records <- list()
for (i in seq_along(uni_cases)) {
  cs <- uni_cases[[i]]
  uni_records[[cs$name]] <- run_uni(cs, seed = 1000 + i)
}
for (cs in fallback_cases) {
  seed <- 1
  repeat {
    d <- gen_data(cs, seed)
    m <- RRuni(response = d$response, model = cs$model, p = cs$p, group = d$group, MLest = FALSE)
    est <- cs$out(m)
    if (any(est <= 0 | est >= 1)) break
    seed <- seed + 1
  }
  cs$out <- NULL
  rec <- run_uni(cs, seed = seed)
  rec$ml_constrained <- constrained_ml(cs$model, cs$p, d$response, d$group)
  uni_records[[cs$name]] <- rec
}
json_out$RRuni <- uni_records

json_path <- file.path(out_dir, "rrreg.json")
write_json_now <- function() {
  writeLines(toJSON(json_out, auto_unbox = TRUE, digits = NA, na = "null", null = "null",
                    pretty = TRUE), json_path)
}
write_json_now()
cat("RRuni part written\n")

# ---------------------------------------------------------------------------------------
# (b) logistic regression: RRlog on one simulated dataset, one response column per design

# Polish an RRlog optimum on RRreg's own log-likelihood and take the observed information
# by Richardson extrapolation (numDeriv), for SEs free of optim's finite-difference error.
polish <- function(fit, model, p, x, y, group) {
  two <- RRreg:::is2group(model)
  k <- length(fit$coefficients)
  f <- function(par) RRreg:::RRlog_loglik(par, X = x, y = y, model = model, prand = p,
                                          group = group, n.response = rep(1, length(y)))
  lower <- c(rep(-Inf, ncol(x)), if (two) 0)
  upper <- c(rep(Inf, ncol(x)), if (two) 1)
  o <- optim(unname(fit$coefficients), f, method = "L-BFGS-B", lower = lower, upper = upper,
             control = list(fnscale = -1, factr = 1, pgtol = 0, maxit = 10000))
  H <- numDeriv::hessian(f, o$par)
  se <- rep(NA_real_, k)
  try(se <- sqrt(diag(solve(-H))), silent = TRUE)
  list(
    coefficients = setNames(as.list(o$par), fit$param), logLik = o$value,
    se_exact = setNames(as.list(se), fit$param),
    convergence = o$convergence,
    method = "optim L-BFGS-B (factr = 1, pgtol = 0) on RRreg:::RRlog_loglik from RRlog's estimate; se_exact from numDeriv::hessian"
  )
}

rrlog_record <- function(fit, call, model, p, data_file, formula, x, y, group) {
  V <- fit$vcov
  se <- if (is.null(V)) rep(NA_real_, length(fit$coefficients)) else sqrt(diag(V))
  list(
    model = model, p = arr(p), formula = formula, data = data_file,
    call = call, n = fit$n,
    terms = arr(fit$param),
    coefficients = setNames(as.list(unname(fit$coefficients)), fit$param),
    se = setNames(as.list(unname(se)), fit$param),
    vcov = if (is.null(V)) NULL else matrix_rows(V),
    logLik = fit$logLik,
    LR_deltaLogLik = setNames(as.list(unname(fit$deltaLogLik)), fit$param),
    LR_p = setNames(as.list(unname(fit$prob)), fit$param),
    convergence = fit$convergence,
    polished = polish(fit, model, p, x, y, group)
  )
}

log_seed <- 20261123
set.seed(log_seed)
n_log <- 1500
logdat <- data.frame(
  x1 = round(rnorm(n_log), 3),
  x2 = rbinom(n_log, 1, 0.5)
)
beta_true <- c(-0.5, 0.8, -0.6)
logdat$true <- rbinom(n_log, 1, plogis(beta_true[1] + beta_true[2] * logdat$x1 + beta_true[3] * logdat$x2))
logdat$group <- rep(1:2, times = c(n_log / 2, n_log / 2))

log_designs <- list(
  list(name = "Warner", model = "Warner", p = 0.8),
  list(name = "FR", model = "FR", p = c(0.1, 0.2)),
  list(name = "Crosswise", model = "Crosswise", p = 0.25),
  list(name = "Kuk", model = "Kuk", p = c(0.7, 0.3)),
  list(name = "UQTknown", model = "UQTknown", p = c(0.7, 1 / 12)),
  list(name = "Mangat", model = "Mangat", p = 0.8),
  list(name = "Triangular", model = "Triangular", p = 0.25),
  list(name = "SLD", model = "SLD", p = c(0.3, 0.7), complyRates = c(0.85, 1),
       truth_note = "t = 0.85"),
  list(name = "UQTunknown", model = "UQTunknown", p = c(0.8, 0.3), piUQ = 0.6,
       truth_note = "piUQ = 0.6; generated as UQTknown with p = c(p_g, 0.6) within each group")
)

gen_calls <- character(0)
for (i in seq_along(log_designs)) {
  ds <- log_designs[[i]]
  seed <- log_seed + i
  set.seed(seed)
  if (ds$model == "UQTunknown") {
    y <- integer(n_log)
    for (g in 1:2) {
      rows <- logdat$group == g
      y[rows] <- RRgen(model = "UQTknown", p = c(ds$p[g], ds$piUQ),
                       trueState = logdat$true[rows])$response
    }
    gen_calls[ds$name] <- sprintf(
      "set.seed(%d); for (g in 1:2) y[group == g] <- RRgen(model = \"UQTknown\", p = c(c(%s)[g], %s), trueState = true[group == g])$response",
      seed, paste(ds$p, collapse = ", "), ds$piUQ)
  } else {
    cr <- if (is.null(ds$complyRates)) c(1, 1) else ds$complyRates
    y <- RRgen(model = ds$model, p = ds$p, trueState = logdat$true, complyRates = cr,
               groupRatio = 0.5)$response
    gen_calls[ds$name] <- sprintf(
      "set.seed(%d); y <- RRgen(model = \"%s\", p = c(%s), trueState = true, complyRates = c(%s), groupRatio = 0.5)$response",
      seed, ds$model, num_text(ds$p), paste(cr, collapse = ", "))
  }
  logdat[[paste0("y_", ds$name)]] <- as.integer(y)
}
log_file <- "rrlog_data.csv"
write.csv(logdat, file.path(out_dir, log_file), row.names = FALSE)
xmat <- model.matrix(~ x1 + x2, data = logdat)

log_records <- list()
for (i in seq_along(log_designs)) {
  ds <- log_designs[[i]]
  two <- RRreg:::is2group(ds$model)
  yname <- paste0("y_", ds$name)
  form <- as.formula(paste(yname, "~ x1 + x2"))
  fit_seed <- log_seed + 100 + i
  set.seed(fit_seed)
  if (two) {
    r <- recorded(RRlog(form, data = logdat, model = ds$model, p = ds$p, group = group))
  } else {
    r <- recorded(RRlog(form, data = logdat, model = ds$model, p = ds$p))
  }
  call <- sprintf("set.seed(%d); RRlog(%s ~ x1 + x2, data = rrlog_data, model = \"%s\", p = c(%s)%s)",
                  fit_seed, yname, ds$model, num_text(ds$p),
                  if (two) ", group = group" else "")
  rec <- rrlog_record(r$value, call, ds$model, ds$p, log_file, paste(yname, "~ x1 + x2"),
                      xmat, logdat[[yname]], if (two) logdat$group else rep(1, n_log))
  rec$response_column <- yname
  rec$gen_call <- gen_calls[[ds$name]]
  rec$truth_note <- num_or_null(ds$truth_note)
  log_records[[ds$name]] <- rec
}
json_out$RRlog_simulated <- list(
  data = log_file, n = n_log, seed = log_seed,
  gen_call = sprintf(
    "set.seed(%d); x1 <- round(rnorm(%d), 3); x2 <- rbinom(%d, 1, 0.5); true <- rbinom(%d, 1, plogis(-0.5 + 0.8 * x1 - 0.6 * x2)); group <- rep(1:2, each = %d)",
    log_seed, n_log, n_log, n_log, n_log / 2),
  beta_true = list(Intercept = beta_true[1], x1 = beta_true[2], x2 = beta_true[3]),
  fits = log_records
)
write_json_now()
cat("RRlog simulated part written\n")

# ---------------------------------------------------------------------------------------
# (b) Nigeria (Blair, Imai & Zhou 2015, rr's data): RRlog, rr::rrreg and RRuni

data(nigeria, package = "rr")
nig_formula <- rr.q1 ~ cov.asset.index + cov.married + I(cov.age/10) + I((cov.age/10)^2) +
  cov.education + cov.female
nig_formula_text <- paste(deparse(nig_formula, width.cutoff = 500), collapse = " ")
nig_mf <- model.frame(nig_formula, data = nigeria, na.action = na.omit)
nig_x <- model.matrix(attr(nig_mf, "terms"), data = nig_mf)
nig_y <- model.response(nig_mf)

nig_seed <- 2015
set.seed(nig_seed)
r <- recorded(RRlog(nig_formula, data = nigeria, model = "FR", p = c(1 / 6, 1 / 6)))
nig_rrlog <- rrlog_record(r$value, sprintf("set.seed(%d); %s", nig_seed, r$call), "FR", c(1 / 6, 1 / 6),
                          "rr::nigeria", nig_formula_text, nig_x, nig_y, rep(1, length(nig_y)))

# rr::rrreg, forced response: p = probability of answering truthfully, p1 = forced yes, p0 = forced no
rr_record <- function(fit, call) {
  cf <- setNames(as.list(unname(fit$est)), fit$coef.names)
  gx <- plogis(as.vector(fit$x %*% fit$est))
  c <- fit$p
  d <- fit$p1
  ll <- sum(fit$y * log(c * gx + d) + (1 - fit$y) * log(1 - c * gx - d))
  list(
    call = call, n = length(fit$y), terms = arr(fit$coef.names),
    coefficients = cf,
    se = setNames(as.list(unname(fit$se)), fit$coef.names),
    vcov = matrix_rows(fit$vcov),
    logLik = ll,
    logLik_note = "rrreg returns no log-likelihood; this is sum(y log(c g + d) + (1 - y) log(1 - c g - d)) at rrreg's estimate, c = p, d = p1, g = plogis(x'b)"
  )
}
r <- recorded(rrreg(nig_formula, data = nigeria, p = 2 / 3, p1 = 1 / 6, p0 = 1 / 6, design = "forced-known"))
nig_rr <- rr_record(r$value, r$call)
r <- recorded(rrreg(nig_formula, data = nigeria, p = 2 / 3, p1 = 1 / 6, p0 = 1 / 6, design = "forced-known",
                    optim = TRUE))
nig_rr_optim <- rr_record(r$value, r$call)
nig_rr_optim$se_note <- "optim = TRUE: SEs from optim's BFGS Hessian (maxit = 0) at the EM estimate, not the OPG"

nig_resp <- nigeria$rr.q1[!is.na(nigeria$rr.q1)]
r <- recorded(RRuni(response = nig_resp, model = "FR", p = c(1 / 6, 1 / 6)))
nig_uni <- uni_fit_record("FR", r$value, c(1 / 6, 1 / 6), nig_resp, NULL, 1)
nig_uni$call <- paste("nig_resp <- nigeria$rr.q1[!is.na(nigeria$rr.q1)];", r$call)

# Published Table 3 (Blair, Imai & Zhou 2015), as printed: a fit reproduces it when it rounds to
# the printed digits.
pub_coef <- c("(Intercept)" = "-0.340", cov.asset.index = "0.0790", cov.married = "-0.267",
              "I(cov.age/10)" = "-0.353", "I((cov.age/10)^2)" = "0.0410",
              cov.education = "-0.0069", cov.female = "-0.554")
pub_se <- c("(Intercept)" = "0.509", cov.asset.index = "0.0414", cov.married = "0.255",
            "I(cov.age/10)" = "0.264", "I((cov.age/10)^2)" = "0.0260",
            cov.education = "0.0456", cov.female = "0.162")
decimals <- function(txt) nchar(sub("^[^.]*\\.", "", txt))
matches_printed <- function(values, printed) {
  setNames(as.list(vapply(names(printed), function(nm) {
    isTRUE(abs(round(values[[nm]], decimals(printed[[nm]])) - as.numeric(printed[[nm]])) < 1e-12)
  }, TRUE)), names(printed))
}
published_check <- list(
  RRlog_coefficients = matches_printed(nig_rrlog$coefficients, pub_coef),
  rrreg_coefficients = matches_printed(nig_rr$coefficients, pub_coef),
  rrreg_se = matches_printed(nig_rr$se, pub_se),
  RRlog_se = matches_printed(nig_rrlog$se, pub_se),
  rrreg_logLik = round(nig_rr$logLik, 2) == -1540.12,
  RRlog_logLik = round(nig_rrlog$logLik, 2) == -1540.12,
  RRuni_pi = round(nig_uni$pi[[2]], 4) == 0.2619,
  RRuni_se = round(nig_uni$piSE[[2]], 4) == 0.0144,
  note = "TRUE where the fit rounds to the printed digits; RRlog's SEs (observed information) are expected to differ from the printed OPG SEs in the last digits"
)

json_out$nigeria <- list(
  data = "data(nigeria, package = \"rr\") (identical to the shared nigeria.csv: 2457 rows, same columns and values)",
  n_rows = nrow(nigeria), n_complete_cases = nrow(nig_mf),
  formula = nig_formula_text,
  design = "forced response: truthful 2/3, forced yes 1/6, forced no 1/6; RRreg model \"FR\", p = c(1/6, 1/6) (forced 0, forced 1)",
  published_table3 = list(
    source = "Blair, Imai & Zhou (2015) JASA, Table 3 (rr::rrreg, logistic)",
    coefficients = lapply(as.list(pub_coef), as.numeric),
    se = lapply(as.list(pub_se), as.numeric),
    n = 2423, logLik = -1540.12
  ),
  RRlog = nig_rrlog,
  rrreg = nig_rr,
  rrreg_optim = nig_rr_optim,
  RRuni = nig_uni,
  published_check = published_check
)
write_json_now()
cat("Nigeria part written\n")

# ---------------------------------------------------------------------------------------
# (c) power: rr::power.rr.test (closed form) and RRreg::RRsimu (Monte Carlo)

# power.rr.test's arguments as given; returns the call text and the returned list.
power_case <- function(args) {
  res <- do.call(power.rr.test, args)
  arg_text <- paste(vapply(names(args), function(nm) {
    v <- args[[nm]]
    paste0(nm, " = ", if (is.character(v)) paste0("\"", v, "\"") else num_text(v))
  }, ""), collapse = ", ")
  list(
    call = paste0("power.rr.test(", arg_text, ")"),
    args = args,
    n = res$n, power = res$power, presp = res$presp, presp.null = res$presp.null
  )
}

forced <- list(p = 2 / 3, p1 = 1 / 6, p0 = 1 / 6, design = "forced-known")
power_cases <- list()
for (n in c(250, 500, 1000, 2000)) {
  for (presp in c(0.05, 0.1, 0.2)) {
    for (sig in c(0.01, 0.05)) {
      for (alt in c("one.sided", "two.sided")) {
        power_cases[[length(power_cases) + 1]] <- power_case(c(forced, list(
          n = n, presp = presp, presp.null = 0, sig.level = sig,
          type = "one.sample", alternative = alt)))
      }
    }
  }
}
power_cases[[length(power_cases) + 1]] <- power_case(c(forced, list(
  n = 1000, presp = 0.2, presp.null = 0.1, sig.level = 0.05, type = "one.sample", alternative = "one.sided")))
power_cases[[length(power_cases) + 1]] <- power_case(c(forced, list(
  n = 1000, presp = 0.2, presp.null = 0.1, sig.level = 0.05, type = "one.sample", alternative = "two.sided")))
for (alt in c("one.sided", "two.sided")) {
  power_cases[[length(power_cases) + 1]] <- power_case(c(forced, list(
    n = 500, prespT = 0.2, prespC = 0.1, prespC.null = 0.1, sig.level = 0.05,
    type = "two.sample", alternative = alt)))
}
# mirrored question = RRreg's Warner (p = prob. of the sensitive statement);
# unrelated-known = RRreg's UQTknown with p = c(p, q)
for (alt in c("one.sided", "two.sided")) {
  power_cases[[length(power_cases) + 1]] <- power_case(list(
    p = 0.8, design = "mirrored", n = 500, presp = 0.1, presp.null = 0, sig.level = 0.05,
    type = "one.sample", alternative = alt))
  power_cases[[length(power_cases) + 1]] <- power_case(list(
    p = 0.7, q = 1 / 12, design = "unrelated-known", n = 500, presp = 0.1, presp.null = 0,
    sig.level = 0.05, type = "one.sample", alternative = alt))
}
# sample size for a given power: rr scans n = 1, 2, ... and stops at the first n whose power
# is within 0.01 of the target, so this n is only approximate (it is rr's answer, not the minimum)
n_cases <- list()
for (presp in c(0.05, 0.1)) {
  n_cases[[length(n_cases) + 1]] <- power_case(c(forced, list(
    presp = presp, presp.null = 0, sig.level = 0.05, power = 0.8,
    type = "one.sample", alternative = "one.sided")))
}

simu_seed <- 777
set.seed(simu_seed)
s_uni <- recorded(RRsimu(numRep = 1000, n = 500, pi = 0.1, model = "FR", p = c(1 / 6, 1 / 6),
                         method = "RRuni", MLest = FALSE))
simu_seed2 <- 778
set.seed(simu_seed2)
s_log <- recorded(RRsimu(numRep = 200, n = 500, pi = 0.3, model = "Warner", p = 0.8, b.log = 0.5,
                         method = "RRlog"))
simu_record <- function(s, seed) {
  pw <- s$value$power
  list(
    call = sprintf("set.seed(%d); %s", seed, s$call),
    power = named(pw),
    mc_se = named(sqrt(pw * (1 - pw) / s$value$numRep)),
    numRep = s$value$numRep,
    results_mean = setNames(as.list(s$value$results[, "Mean"]), rownames(s$value$results)),
    results_sd = setNames(as.list(s$value$results[, "SD"]), rownames(s$value$results))
  )
}

json_out$power <- list(
  notes = arr(c(
    "power.rr.test uses the expected-information SE at presp (alternative) and at presp.null (null), with n (not n - 1); one.sided: power = P(N(presp, se) > presp.null + qnorm(1 - alpha) se.null); two.sided adds the lower tail with alpha/2.",
    "two.sample: both arms of size n each; se = sqrt(se_T^2 + se_C^2).",
    "RRsimu is Monte Carlo with R's RNG: compare its power within a few mc_se, not exactly. RRuni(z-test) power = share of replications with pnorm(pi/piSE, lower.tail = FALSE) < alpha (one-sided, alpha = 0.05); RRlog(LR-test) = share with LR p-value of the slope < alpha. The true state is drawn Bernoulli(pi) per replication (population sampling)."
  )),
  power_rr_test = power_cases,
  sample_size_rr_test = n_cases,
  RRsimu = list(RRuni_FR = simu_record(s_uni, simu_seed), RRlog_Warner = simu_record(s_log, simu_seed2))
)
write_json_now()
cat("power part written\n")

# ---------------------------------------------------------------------------------------
# (d) linear regression with a randomized-response predictor: RRlin

lin_seed <- 4242
set.seed(lin_seed)
n_lin <- 1000
lindat <- RRgen(n = n_lin, pi.true = 0.3, model = "Warner", p = 0.8)
lindat$z <- round(rnorm(n_lin), 3)
lindat$depvar <- round(1 + 2 * lindat$true + 0.5 * lindat$z + rnorm(n_lin, 0, 1.5), 4)
lin_file <- "rrlin_data.csv"
write.csv(lindat[, c("true", "response", "z", "depvar")], file.path(out_dir, lin_file), row.names = FALSE)
set.seed(lin_seed + 1)
r <- recorded(RRlin(depvar ~ response + z, data = lindat, models = "Warner", p.list = list(0.8), fit.n = 3))
f <- r$value
V <- f$vcov
json_out$RRlin <- list(
  data = lin_file, n = n_lin,
  gen_call = sprintf(
    "set.seed(%d); d <- RRgen(n = %d, pi.true = 0.3, model = \"Warner\", p = 0.8); d$z <- round(rnorm(%d), 3); d$depvar <- round(1 + 2 * d$true + 0.5 * d$z + rnorm(%d, 0, 1.5), 4)",
    lin_seed, n_lin, n_lin, n_lin),
  truth = list("(Intercept)" = 1, response = 2, z = 0.5, sigma = 1.5, pi = 0.3),
  call = sprintf("set.seed(%d); %s", lin_seed + 1, sub("lindat", "rrlin_data", r$call)),
  model = "Warner", p = arr(0.8),
  coefficients = named(f$beta),
  se = setNames(as.list(sqrt(diag(V))[names(f$beta)]), names(f$beta)),
  sigma = unname(f$sigma), sigma_se = unname(sqrt(V["sigma", "sigma"])),
  pi = named(f$pi),
  vcov_names = arr(rownames(V)), vcov = matrix_rows(V),
  logLik = f$logLik,
  convergence = f$convergence,
  note = "RRlin's latent classes are the true states of the RR predictor (pi.0 = share of true state 0, pi.1 = carriers); the fitted y | true state is normal with common sigma; vcov = solve of RRlin's Hessian (its rows: beta, sigma, pi.0)."
)
write_json_now()
cat("RRlin part written\n")
