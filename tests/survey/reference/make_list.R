#!/usr/bin/env Rscript
# Reference values from R's list package (Blair, Chou & Imai) for deniable's list-experiment tests,
# on the race data of Kuklinski, Cobb & Gilens (1997) that the package ships (examples/data/race.csv
# is that data set). Run from the repository root, with the list package installed:
#
#     Rscript tests/survey/reference/make_list.R
#
# It writes tests/survey/reference/list.json. The test suite only reads it.

if (!exists("ictreg")) suppressPackageStartupMessages(library(list))
suppressPackageStartupMessages(library(jsonlite))

out_dir <- file.path("tests", "survey", "reference")
if (!dir.exists(out_dir)) stop("run from the repository root: ", out_dir, " not found")
race <- read.csv(file.path("examples", "data", "race.csv"))
num <- function(x) signif(unname(x), 15)

ml <- ictreg(y ~ south + age + male + college, data = race, treat = "treat", J = 3, method = "ml")
ml_pred <- predict(ml, se.fit = TRUE, interval = "confidence")
ml_avg <- predict(ml, avg = TRUE, se.fit = TRUE, interval = "confidence")
lm_fit <- ictreg(y ~ south + age + male + college, data = race, treat = "treat", J = 3, method = "lm")
nls_fit <- ictreg(y ~ south + age + male + college, data = race, treat = "treat", J = 3, method = "nls")
dim_fit <- ictreg(y ~ 1, data = race, treat = "treat", J = 3, method = "lm")
design_test <- ict.test(race$y, race$treat, J = 3, gms = FALSE)
y1 <- race$y[race$treat == 1]
y0 <- race$y[race$treat == 0]

ref <- list(
  meta = list(R = R.version.string, list = "9.2.6", jsonlite = as.character(packageVersion("jsonlite")),
              note = paste("ictreg's ML SEs come from optim's numerical Hessian at the EM estimate; lm's SEs are",
                           "sandwich::vcovHC's default, HC3; nls's are the two-step sandwich. Predictions: predict.ictreg with se.fit = TRUE.")),
  ml = list(sensitive = num(ml$par.treat), control = num(ml$par.control),
            sensitive_se = num(ml$se.treat), control_se = num(ml$se.control), llik = num(ml$llik),
            names = names(ml$par.treat)),
  predict = list(fit_first10 = num(ml_pred$fit[1:10, 1]), se_first10 = num(ml_pred$se.fit[1:10]),
                 avg = num(ml_avg$fit[1, 1]), avg_se = num(ml_avg$se.fit)),
  lm = list(sensitive = num(lm_fit$par.treat), control = num(lm_fit$par.control),
            sensitive_se = num(lm_fit$se.treat), control_se = num(lm_fit$se.control)),
  nls = list(sensitive = num(nls_fit$par.treat), control = num(nls_fit$par.control),
             sensitive_se = num(nls_fit$se.treat), control_se = num(nls_fit$se.control)),
  ict_test = list(p = num(design_test$p), pi_table_rounded = unname(design_test$pi.table),
                  rows = rownames(design_test$pi.table)),
  difference = list(lm_estimate = num(dim_fit$par.treat), lm_se_hc3 = num(dim_fit$se.treat),
                    welch_se = num(sqrt(var(y1) / length(y1) + var(y0) / length(y0))))
)
writeLines(toJSON(ref, auto_unbox = TRUE, digits = NA, pretty = TRUE), file.path(out_dir, "list.json"))
