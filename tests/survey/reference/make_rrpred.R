#!/usr/bin/env Rscript
# Reference values for randomized answers as predictors and correlations: rr's rrreg.predictor,
# RRreg's RRlin (several randomized predictors, a two-group one) and RRcor. Run from the
# repository root, with RRreg and rr installed (their public sources, R CMD INSTALL):
#
#     Rscript tests/survey/reference/make_rrpred.R
#
# It writes tests/survey/reference/rrpred.json and rrpred_data.csv. The test suite only reads them.

suppressPackageStartupMessages({
  library(RRreg)
  library(rr)
  library(jsonlite)
})

out_dir <- file.path("tests", "survey", "reference")
if (!dir.exists(out_dir)) stop("run from the repository root: ", out_dir, " not found")
RNGkind("Mersenne-Twister", "Inversion", "Rejection")
num <- function(x) signif(unname(x), 15)
named <- function(x) as.list(setNames(num(x), names(x)))
rows <- function(m) lapply(seq_len(nrow(m)), function(i) num(m[i, ]))

# ---------------------------------------------------------------- the data (n = 1500)
set.seed(2615)
n <- 1500
x1 <- round(rnorm(n), 3)
x2 <- rbinom(n, 1, 0.4)
z <- rbinom(n, 1, plogis(-0.4 + 0.7 * x1 - 0.5 * x2))            # the latent truth of rr's item
o <- rbinom(n, 1, plogis(-0.5 + 0.6 * x1 + 0.4 * x2 + 1.1 * z))   # a plain outcome
# forced response, rr's forced-known: truthful with p = 0.7, forced "yes" p1 = 0.2, forced "no" p0 = 0.1
u <- runif(n)
r_fr <- ifelse(u < 0.7, z, ifelse(u < 0.9, 1, 0))
w2 <- rbinom(n, 1, ifelse(z == 1, 0.6, 0.25))                      # a second latent truth
r_w <- RRgen(n, pi.true = 0.5, model = "Warner", p = 0.8, trueState = w2)$response
w3 <- rbinom(n, 1, 0.35)                                            # a third, for UQTknown and SLD
r_uqt <- RRgen(n, pi.true = 0.35, model = "UQTknown", p = c(0.7, 0.4), trueState = w3)$response
sld <- RRgen(n, pi.true = 0.35, model = "SLD", p = c(0.3, 0.7), complyRates = c(0.8, 1), trueState = w3)
y <- round(1 + 1.5 * z - 1 * w2 + 0.8 * w3 + 0.5 * x1 + rnorm(n, 0, 1.2), 4)   # a continuous outcome
dat <- data.frame(x1, x2, z, w2, w3, o, y, r_fr, r_w, r_uqt, r_sld = sld$response, g_sld = sld$group)
write.csv(dat, file.path(out_dir, "rrpred_data.csv"), row.names = FALSE)

out <- list(meta = list(
  R = R.version.string, RRreg = as.character(packageVersion("RRreg")), rr = as.character(packageVersion("rr")),
  seed = 2615, data = "rrpred_data.csv",
  note = paste("Columns: x1, x2 plain covariates; z, w2, w3 the latent truths; o a plain 0/1 outcome; y a",
               "continuous outcome; r_fr = forced response about z (truthful 0.7, forced yes 0.2, forced no 0.1);",
               "r_w = Warner (p = 0.8) about w2; r_uqt = UQTknown (p = c(0.7, 0.4)) about w3; r_sld = SLD",
               "(p = c(0.3, 0.7), t = 0.8) about w3 with its group g_sld.")))

# ---------------------------------------------------------------- rr::rrreg.predictor (pure ML: glm M-steps)
fit <- rrreg.predictor(o ~ x1 + x2 + r_fr, data = dat, rr.item = "r_fr", p = 0.7, p1 = 0.2, p0 = 0.1,
                       design = "forced-known", fit.sens = "glm", fit.outcome = "glm", optim = TRUE,
                       em.converge = 1e-10, maxIter = 100000, parstart = TRUE)
V <- fit$vcov
out$rrreg_predictor <- list(
  call = paste("rrreg.predictor(o ~ x1 + x2 + r_fr, data = dat, rr.item = \"r_fr\", p = 0.7, p1 = 0.2, p0 = 0.1,",
               "design = \"forced-known\", fit.sens = \"glm\", fit.outcome = \"glm\", optim = TRUE,",
               "em.converge = 1e-10, maxIter = 100000, parstart = TRUE)"),
  outcome = num(fit$est.t), outcome_se = num(fit$se.t), sensitive = num(fit$est.b), sensitive_se = num(fit$se.b),
  names_outcome = c("(Intercept)", "x1", "x2", "r_fr"), names_sensitive = c("(Intercept)", "x1", "x2"),
  vcov = rows(V),
  note = "est.t: the outcome's coefficients (the last is r_fr's truth); est.b: logit P(truth | x); vcov from optim's numerical Hessian at the EM estimate (rows: est.b, then est.t).")

# ---------------------------------------------------------------- RRreg::RRlin, several predictors
set.seed(1)
lin <- RRlin(y ~ r_fr + r_w + r_uqt + x1, data = dat, models = c("FR", "Warner", "UQTknown"),
             p.list = list(c(0.1, 0.2), 0.8, c(0.7, 0.4)), fit.n = 5, maxit = 5000)
se <- sqrt(diag(lin$vcov))
nb <- length(lin$beta)
out$RRlin_three <- list(
  call = paste("set.seed(1); RRlin(y ~ r_fr + r_w + r_uqt + x1, data = dat, models = c(\"FR\", \"Warner\",",
               "\"UQTknown\"), p.list = list(c(0.1, 0.2), 0.8, c(0.7, 0.4)), fit.n = 5, maxit = 5000)"),
  beta = named(lin$beta), beta_se = num(se[1:nb]), sigma = num(lin$sigma), sigma_se = num(se[nb + 1]),
  pi = named(lin$pi), pi_se = num(se[(nb + 2):length(se)]), logLik = num(lin$logLik),
  convergence = lin$convergence,
  note = "pi: the latent states in kronecker order (r_fr slowest); pi_se for all but the last (fixed by the sum).")

set.seed(2)
lin2 <- RRlin(y ~ r_w + r_sld + x1, data = dat, models = c("Warner", "SLD"), p.list = list(0.8, c(0.3, 0.7)),
              group = cbind(1, dat$g_sld), fit.n = 5, maxit = 5000)
se2 <- sqrt(diag(lin2$vcov))
nb2 <- length(lin2$beta)
out$RRlin_sld <- list(
  call = paste("set.seed(2); RRlin(y ~ r_w + r_sld + x1, data = dat, models = c(\"Warner\", \"SLD\"),",
               "p.list = list(0.8, c(0.3, 0.7)), group = cbind(1, dat$g_sld), fit.n = 5, maxit = 5000)"),
  beta = named(lin2$beta), beta_se = num(se2[1:nb2]), sigma = num(lin2$sigma), pi = named(lin2$pi),
  t = num(lin2$par2["SLD"]), logLik = num(lin2$logLik),
  note = "RRlin plugs in SLD's t from RRuni (answers only) and holds it fixed; the SEs ignore its uncertainty.")

# ---------------------------------------------------------------- RRreg::RRcor
cx <- cbind(r_fr = dat$r_fr, r_w = dat$r_w, r_uqt = dat$r_uqt, x1 = dat$x1, y = dat$y)
set.seed(3)
cr <- RRcor(x = cx, models = c("FR", "Warner", "UQTknown", "direct", "direct"),
            p.list = list(c(0.1, 0.2), 0.8, c(0.7, 0.4)), bs.n = 1000, bs.type = "se.n")
truth <- cor(cbind(dat$z, dat$w2, dat$w3, dat$x1, dat$y))
out$RRcor <- list(
  call = paste("set.seed(3); RRcor(x = cbind(r_fr, r_w, r_uqt, x1, y), models = c(\"FR\", \"Warner\", \"UQTknown\",",
               "\"direct\", \"direct\"), p.list = list(c(0.1, 0.2), 0.8, c(0.7, 0.4)), bs.n = 1000, bs.type = \"se.n\")"),
  names = colnames(cx), r = rows(cr$r), se_bootstrap = rows(cr$rSE.n), bootstrap_n = 1000,
  true_r = rows(truth),
  note = "r: RRcor's estimate; se_bootstrap: its nonparametric bootstrap SEs (Monte Carlo error about 2.2% of the SE); true_r: cor of the latent truths themselves.")

writeLines(toJSON(out, auto_unbox = TRUE, digits = NA, pretty = TRUE, na = "null"), file.path(out_dir, "rrpred.json"))
cat("written\n")
