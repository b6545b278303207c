package esqlog.terms;

import java.io.IOException;

import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.search.FilterWeight;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.Scorer;
import org.apache.lucene.search.ScorerSupplier;
import org.apache.lucene.search.Weight;

/**
 * A filter weight whose every scorer comes from its {@code scorerSupplier}, on Lucene 9.x.
 *
 * <p>Why: Lucene 9's BooleanWeight and Weight.bulkScorer ask {@code Weight.scorer} directly,
 * and FilterWeight hands that to the wrapped weight with the engine's leaf; RareGroupWeight
 * must hand its synonym weight the rare view's leaf instead, which it does in scorerSupplier.
 * Lucene 10 made {@code scorer} and {@code bulkScorer} final callers of scorerSupplier, so
 * there (lucene-10.0/, lucene-10.4/) this class adds nothing.
 */
abstract class SupplierWeight extends FilterWeight {
    protected SupplierWeight(Query query, Weight weight) {
        super(query, weight);
    }

    @Override
    public Scorer scorer(LeafReaderContext context) throws IOException {
        ScorerSupplier supplier = scorerSupplier(context);
        return supplier == null ? null : supplier.get(Long.MAX_VALUE);
    }
}
