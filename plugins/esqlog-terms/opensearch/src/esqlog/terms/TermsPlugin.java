package esqlog.terms;

import java.util.List;

import org.opensearch.plugins.Plugin;
import org.opensearch.plugins.SearchPlugin;

/** Registers the esqlog_terms query (TermsQueryBuilder). */
public final class TermsPlugin extends Plugin implements SearchPlugin {
    @Override
    public List<QuerySpec<?>> getQueries() {
        return List.of(new QuerySpec<>(TermsQueryBuilder.NAME, TermsQueryBuilder::new,
            TermsQueryBuilder::fromXContent));
    }
}
