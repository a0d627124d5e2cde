#!/usr/bin/env Rscript
# Reference values from lme4's glmer (Bates, Maechler, Bolker & Walker) for deniable's random-effects
# randomized-response logit (dn.survey.glmer), on the simulated data glmer_data.csv (30 schools,
# 1232 respondents; a direct answer, a Warner answer with p = 0.8 and a forced-response answer with
# P(forced no) = 0.1, P(forced yes) = 0.15 about the same true state). Run from the repository root:
#
#     Rscript tests/survey/reference/make_glmer.R
#
# Direct questioning is glmer(family = binomial). A randomized answer is fitted as GLMMRR's RRglmer
# fits it: glmer with the binomial family and the link mu = c + d * logistic(eta), where
# c = P(yes | non-carrier) and d = P(yes | carrier) - c come from the design (Fox, Klotzke & Veen
# 2018). The link is written out below; if GLMMRR is installed, its RRglmer is run on the same data
# and its estimates are stored beside (they must agree). It writes tests/survey/reference/glmer.json.

suppressPackageStartupMessages(library(lme4))
suppressPackageStartupMessages(library(jsonlite))

out_dir <- file.path("tests", "survey", "reference")
if (!dir.exists(out_dir)) stop("run from the repository root: ", out_dir, " not found")
df <- read.csv(file.path(out_dir, "glmer_data.csv"))
df$school <- factor(df$school)
num <- function(x) signif(unname(x), 15)

rr_link <- function(c, d) {
  structure(list(linkfun = function(mu) log((mu - c) / (c + d - mu)),
                 linkinv = function(eta) c + d * plogis(eta),
                 mu.eta = function(eta) d * dlogis(eta),
                 valideta = function(eta) TRUE, name = "RRlogit"), class = "link-glm")
}
designs <- list(dq = c(0, 1), warner = c(0.2, 0.6), fr = c(0.15, 0.75))  # c, d
# lme4's default PIRLS tolerance (tolPwrss = 1e-7) leaves the Laplace deviance off by about 1e-4 on these
# data; the tightest tolerance at which PIRLS converges is used and recorded.
control <- function(tol) glmerControl(optimizer = "bobyqa", optCtrl = list(rhoend = 1e-10, maxfun = 1e5),
                                      tolPwrss = tol)
tolerances <- c(1e-12, 1e-11, 1e-10, 1e-9, 1e-8)

fit_one <- function(name, random, nAGQ) {
  cd <- designs[[name]]
  message(name, " ", random, " nAGQ = ", nAGQ)
  family <- if (name == "dq") binomial() else binomial(link = rr_link(cd[1], cd[2]))
  formula <- as.formula(paste0("y_", name, " ~ x + z + ", random))
  mustart <- if (name == "dq") NULL else rep(cd[1] + cd[2] / 2, nrow(df))
  for (tol in tolerances) {
    m <- tryCatch(glmer(formula, data = df, family = family, nAGQ = nAGQ, control = control(tol), mustart = mustart),
                  error = function(e) NULL)
    if (!is.null(m)) break
  }
  dev <- glmer(formula, data = df, family = family, nAGQ = nAGQ, control = control(tol), mustart = mustart,
               devFunOnly = TRUE)
  at <- c(getME(m, "theta"), fixef(m))
  vc <- as.data.frame(VarCorr(m))
  list(call = paste0("glmer(", deparse(formula), ", family = ", if (name == "dq") "binomial" else
                       sprintf("binomial(link = RRlogit(c = %g, d = %g))", cd[1], cd[2]), ", nAGQ = ", nAGQ, ")"),
       c = cd[1], d = cd[2], nAGQ = nAGQ, beta = num(fixef(m)), se = num(sqrt(diag(as.matrix(vcov(m))))),
       theta = num(getME(m, "theta")), variance = num(vc$vcov[is.na(vc$var2)]),
       sd = num(vc$sdcor[is.na(vc$var2)]), corr = num(vc$sdcor[!is.na(vc$var2)]),
       logLik = num(as.numeric(logLik(m))), AIC = num(AIC(m)), tolPwrss = tol,
       # the approximated log-likelihood at fixed points: lme4's estimate and theta, beta moved by 0.1
       points = list(at = list(num(at), num(at + 0.1)), logLik = num(c(-dev(at) / 2, -dev(at + 0.1) / 2))),
       ranef = num(ranef(m)$school[, 1]))
}

fits <- list(
  dq_laplace = fit_one("dq", "(1 | school)", 1),
  dq_agq10 = fit_one("dq", "(1 | school)", 10),
  dq_slope = fit_one("dq", "(1 + x | school)", 1),
  warner_laplace = fit_one("warner", "(1 | school)", 1),
  warner_agq10 = fit_one("warner", "(1 | school)", 10),
  warner_slope = fit_one("warner", "(1 + x | school)", 1),
  fr_laplace = fit_one("fr", "(1 | school)", 1),
  fr_agq10 = fit_one("fr", "(1 | school)", 10)
)

glmmrr <- NULL
if (requireNamespace("GLMMRR", quietly = TRUE)) {
  suppressPackageStartupMessages(library(GLMMRR))
  df$RRmodel <- "Warner"
  df$p1 <- 0.8
  invisible(capture.output(g <- RRglmer(y_warner ~ x + z + (1 | school), link = "RRlink.logit", RRmodel = RRmodel,
                                       p1 = p1, data = df, control = control(fits$warner_laplace$tolPwrss),
                                       nAGQ = 1)))
  glmmrr <- list(call = "RRglmer(y_warner ~ x + z + (1 | school), link = 'RRlink.logit', RRmodel = 'Warner', p1 = 0.8)",
                 version = as.character(packageVersion("GLMMRR")), beta = num(fixef(g)),
                 se = num(sqrt(diag(as.matrix(vcov(g))))), theta = num(getME(g, "theta")),
                 logLik = num(as.numeric(logLik(g))))
}

ref <- list(meta = list(R = R.version.string, lme4 = as.character(packageVersion("lme4")),
                        jsonlite = as.character(packageVersion("jsonlite")),
                        note = paste("glmer with bobyqa (rhoend 1e-10), tolPwrss as recorded; SEs are vcov()",
                                     "(the finite-difference Hessian over theta and beta); variance, sd and",
                                     "corr are VarCorr's; ranef the conditional modes of the intercepts")),
            fits = fits, RRglmer = glmmrr)
write_json(ref, file.path(out_dir, "glmer.json"), digits = NA, auto_unbox = TRUE, pretty = TRUE, null = "null")
