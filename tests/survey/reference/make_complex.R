#!/usr/bin/env Rscript
# Reference values from R's survey package (Lumley) for deniable's complex-sample tests:
# weighted prevalence and randomized-response logistic regression with design-based
# standard errors. Run from the repository root:
#
#     Rscript tests/survey/reference/make_complex.R
#
# It writes tests/survey/reference/complex_data.csv (a simulated stratified cluster sample)
# and tests/survey/reference/complex.json. The test suite only reads those files.

suppressPackageStartupMessages({
  library(survey)
  library(jsonlite)
})

out_dir <- file.path("tests", "survey", "reference")
if (!dir.exists(out_dir)) stop("run from the repository root: ", out_dir, " not found")
RNGkind("Mersenne-Twister", "Inversion", "Rejection")
set.seed(20261127)

# ------------------------------------------------------------------ the sample
# 5 strata with an even number of PSUs each (so that BRR half-samples exist), 20 to 45
# respondents per PSU, weights varying between PSUs and within them, a PSU effect on the
# prevalence (so clustering matters), and two randomized answers about the same state:
# Warner (p = 0.8) and forced response (p0 = p1 = 1/6).
psus_per_stratum <- c(6, 4, 8, 4, 6)
rows <- list()
psu_id <- 0
for (h in seq_along(psus_per_stratum)) {
  for (j in seq_len(psus_per_stratum[h])) {
    psu_id <- psu_id + 1
    m <- sample(20:45, 1)
    u <- rnorm(1, 0, 0.6)
    x <- rnorm(m, mean = 0.3 * h - 0.9)
    state <- rbinom(m, 1, plogis(-0.4 + 0.8 * x + u))
    warner <- ifelse(runif(m) < 0.8, state, 1 - state)
    r <- runif(m)
    fr <- ifelse(r < 1 / 6, 0, ifelse(r < 2 / 6, 1, state))
    w <- round(runif(1, 20, 80) * runif(m, 0.7, 1.3), 3)
    rows[[psu_id]] <- data.frame(stratum = h, psu = j, x = round(x, 6), state = state,
                                 warner = warner, fr = fr, w = w)
  }
}
d <- do.call(rbind, rows)
d$pair <- (d$stratum - 1) * 10 + (d$psu + 1) %/% 2  # BRR: strata of 2 PSUs each
d$pop_psus <- c(40, 30, 60, 25, 50)[d$stratum]       # fpc: PSUs in each stratum's population
write.csv(d, file.path(out_dir, "complex_data.csv"), row.names = FALSE)

num <- function(x) signif(unname(x), 15)
mat <- function(x) unname(apply(as.matrix(x), c(1, 2), function(v) signif(v, 15)))

# ------------------------------------------------------------------ prevalence: svymean
# deff: against simple random sampling with replacement ("replace"), and without replacement
# (TRUE, the factor 1 - n / sum(w)) for the design with a finite population correction
mean_of <- function(des, var = ~warner, deff = "replace") {
  m <- svymean(var, des, deff = deff)
  list(mean = num(coef(m)), se = num(SE(m)), deff = num(deff(m)))
}
des <- svydesign(ids = ~psu, strata = ~stratum, weights = ~w, data = d, nest = TRUE)
des_fpc <- svydesign(ids = ~psu, strata = ~stratum, weights = ~w, fpc = ~pop_psus, data = d, nest = TRUE)
des_w <- svydesign(ids = ~1, weights = ~w, data = d)
des_cl <- svydesign(ids = ~psu, strata = ~stratum, data = d, nest = TRUE)  # unweighted, clustered
fr_mean <- svymean(~factor(fr), des)

# domains: the share of "yes" where x > 0 and where not, and the Wald test of their difference
by_x <- svyby(~warner, ~I(x > 0), des, svymean, covmat = TRUE)
by_contrast <- svycontrast(by_x, c(1, -1))
domains <- list(mean = num(coef(by_x)), se = num(SE(by_x)),
                wald = num((coef(by_contrast) / SE(by_contrast))^2))

# a lonely PSU: stratum 2 keeps only its first PSU
lonely <- subset(d, !(stratum == 2 & psu > 1))
lonely_des <- svydesign(ids = ~psu, strata = ~stratum, weights = ~w, data = lonely, nest = TRUE)
lonely_se <- list()
for (opt in c("remove", "certainty", "adjust", "average")) {
  options(survey.lonely.psu = opt)
  lonely_se[[opt]] <- num(SE(svymean(~warner, lonely_des)))
}
options(survey.lonely.psu = "fail")

# replicate designs: JK1 (no strata), JKn, bootstrap, BRR; replicate weights by PSU
jk1 <- as.svrepdesign(svydesign(ids = ~uid, weights = ~w, data = transform(d, uid = stratum * 100 + psu)),
                      type = "JK1", compress = FALSE)
jkn <- as.svrepdesign(des, type = "JKn", compress = FALSE)
# the bootstrap weights as a user supplies them: svrepdesign's scale 1 / (R - 1) (as.svrepdesign's own
# bootstrap scales by the harmonic mean of the PSUs per stratum instead)
boot_made <- as.svrepdesign(des, type = "bootstrap", replicates = 20, compress = FALSE)
boot <- svrepdesign(data = d, repweights = weights(boot_made, "analysis"), weights = ~w, type = "bootstrap",
                    combined.weights = TRUE)
brr <- as.svrepdesign(svydesign(ids = ~psu, strata = ~pair, weights = ~w, data = d, nest = TRUE),
                      type = "BRR", compress = FALSE)
replicate_entry <- function(rep, mse = FALSE) {
  rep$mse <- mse
  m <- svymean(~warner, rep)
  list(mean = num(coef(m)), se = num(SE(m)))
}
# the replicate weights over the sampling weights are constant within a PSU: one row per PSU,
# in the order of the data (stratum, then PSU)
multipliers <- function(rep) mat((weights(rep, "analysis") / d$w)[!duplicated(paste(d$stratum, d$psu)), ])

# ------------------------------------------------------------------ RR logit: svymle
p <- 0.8
warner_loglik <- function(y, eta) {
  pi <- plogis(eta)
  log(ifelse(y == 1, (1 - p) + (2 * p - 1) * pi, p - (2 * p - 1) * pi))
}
warner_grad <- function(y, eta) {
  pi <- plogis(eta)
  lik <- ifelse(y == 1, (1 - p) + (2 * p - 1) * pi, p - (2 * p - 1) * pi)
  as.matrix((2 * y - 1) * (2 * p - 1) * pi * (1 - pi) / lik)
}
mle_entry <- function(design) {
  fit <- svymle(loglike = warner_loglik, gradient = warner_grad, design = design,
                formulas = list(eta = warner ~ x), start = c(0, 0), method = "BFGS",
                control = list(reltol = 1e-15, maxit = 1000))
  theta <- unname(fit$par)
  # the same sandwich with the exact Hessian of the weighted log-likelihood (svymle's own uses
  # optim's finite differences): svyrecvar of the influence scores, as svymle computes it
  w <- weights(design)
  x <- cbind(1, design$variables$x)
  y <- design$variables$warner
  pi <- plogis(drop(x %*% theta))
  a <- 2 * p - 1
  lik <- ifelse(y == 1, (1 - p) + a * pi, p - a * pi)
  s <- (2 * y - 1) * a * pi * (1 - pi) / lik
  h <- crossprod(x * w * (s * (1 - 2 * pi) - s^2), x)
  scores <- x * s * w
  inv <- solve(-h)
  sand <- svyrecvar(scores %*% inv, design$cluster, design$strata, design$fpc, postStrata = design$postStrata)
  list(coef = num(theta), se_svymle = num(sqrt(diag(vcov(fit)))), se_exact = num(sqrt(diag(sand))),
       vcov_exact = mat(sand))
}
# replicate-weight variance of the same estimator: refit with each replicate's weights
warner_fit <- function(w, data) {
  w <- w / mean(w)  # the same estimate; keeps BFGS's steps in scale
  f <- function(b) -sum(w * warner_loglik(data$warner, b[1] + b[2] * data$x))
  g <- function(b) -colSums(cbind(1, data$x) * drop(warner_grad(data$warner, b[1] + b[2] * data$x)) * w)
  optim(c(0, 0), f, g, method = "BFGS", control = list(reltol = 1e-15, maxit = 1000))$par
}
rep_logit <- function(rep) {
  r <- withReplicates(rep, warner_fit)
  list(coef = num(coef(r)), se = num(SE(r)))
}

ref <- list(
  meta = list(R = R.version.string, survey = as.character(packageVersion("survey")),
              jsonlite = as.character(packageVersion("jsonlite")), seed = 20261127,
              note = paste("svymean of the 0/1 Warner answer (lambda); deniable's pi = (lambda - 0.2) / 0.6 and",
                           "SE(pi) = SE(lambda) / 0.6, the same design effect. Replicate variances centre",
                           "at the replicates' mean unless mse = TRUE. svymle's SEs use optim's numerical",
                           "Hessian; se_exact is the same sandwich with the exact Hessian. deff: svymean's deff='replace',",
                           "deff=TRUE (without replacement) for the design with fpc.")),
  svymean = list(
    strata_cluster = mean_of(des), fpc = mean_of(des_fpc, deff = TRUE), weights_only = mean_of(des_w),
    cluster_unweighted = mean_of(des_cl),
    fr = list(mean = num(coef(fr_mean)), se = num(SE(fr_mean)), vcov = mat(vcov(fr_mean)))
  ),
  domains = c(list(by = "x > 0: FALSE, TRUE"), domains),
  lonely = list(dropped = "stratum 2 keeps PSU 1 only", se = lonely_se),
  replicates = list(
    JK1 = c(replicate_entry(jk1), list(se_mse = replicate_entry(jk1, TRUE)$se, scale = num(jk1$scale))),
    JKn = c(replicate_entry(jkn), list(se_mse = replicate_entry(jkn, TRUE)$se, rscales = num(jkn$rscales))),
    bootstrap = c(replicate_entry(boot), list(se_mse = replicate_entry(boot, TRUE)$se,
                                              multipliers = multipliers(boot))),
    BRR = c(replicate_entry(brr), list(se_mse = replicate_entry(brr, TRUE)$se, multipliers = multipliers(brr)))
  ),
  svymle = list(strata_cluster = mle_entry(des), fpc = mle_entry(des_fpc), cluster_unweighted = mle_entry(des_cl),
                weights_only = mle_entry(des_w)),
  withReplicates = list(JKn = rep_logit(jkn), bootstrap = rep_logit(boot))
)
writeLines(toJSON(ref, auto_unbox = TRUE, digits = NA, pretty = TRUE), file.path(out_dir, "complex.json"))
