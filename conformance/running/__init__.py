"""Running the suite and reporting it: the runner (``runner``, ``profiles``), its reports
(``reports``, ``summary``), several implementations compared (``matrix``), and the campaigns
beside the suite (``differential``, ``bench``, ``fuzz``)."""
