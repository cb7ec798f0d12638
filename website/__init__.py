"""The course as a static website: ``make site`` (:mod:`website.build`)."""
