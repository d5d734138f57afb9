--
-- The settings as a backend shows them: their descriptions are strings made
-- when the postmaster loaded the library, and must outlive the memory the
-- postmaster frees in each backend it starts
--
SELECT name, short_desc, extra_desc
  FROM pg_settings
 WHERE name LIKE 'pg_stat_statements%'
 ORDER BY name COLLATE "C";
